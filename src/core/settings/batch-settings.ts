import type { Config } from './config.js';
import { badInput } from '../basics/errors.js';
import { LOCAL_MACHINE } from '../basics/ids.js';
import type { LaneDirectives } from './lane-directives.js';
import type { Plan } from '../plan/plan.js';
import { DEFAULT_QA_FAILURE_LIMIT } from '../plan/plan.js';
import { resolvePreferences } from './preferences.js';
import type { CommandLinePreferences, Preferences } from './preferences.js';

// What a batch runs with once plan, config, the repository's directives and command-line
// overrides are combined (the executor preferences: src/core/preferences.ts).

export interface BatchSettings {
  maxParallel: number;
  budget: { max_children: number; qa_failure_limit: number; max_tokens?: number };
  /** Executor profile name per child id. */
  executors: Record<string, string>;
  /** Every preference with its source, for the confirmation and the launch. */
  preferences: Preferences;
}

/** What the command line sets (passed on to the preferences as it is). */
export type SettingsOverrides = CommandLinePreferences;

export function resolveSettings(
  plan: Plan,
  config: Config,
  overrides: SettingsOverrides = {},
  directives: LaneDirectives = {},
): BatchSettings {
  const preferences = resolvePreferences(plan, config, overrides, directives);
  const problems = [...preferences.problems, ...pinProblems(plan, config)];
  if (problems.length)
    throw badInput('plan_invalid', `plan cannot run:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  const maxTokens = plan.budget.max_tokens ?? config.budget.max_tokens;
  const executors: Record<string, string> = {};
  for (const [id, p] of Object.entries(preferences.children)) executors[id] = p.executor.value;
  return {
    maxParallel: preferences.maxParallel.value,
    budget: {
      max_children: plan.budget.max_children ?? plan.children.length,
      qa_failure_limit: plan.budget.qa_failure_limit ?? DEFAULT_QA_FAILURE_LIMIT,
      ...(maxTokens !== undefined ? { max_tokens: maxTokens } : {}),
    },
    executors,
    preferences,
  };
}

/**
 * A child's `machine:` must name a machine of the config (where plan and config meet).
 * Without `machines` every lane is local, so "local" is the one name a pin may give.
 */
function pinProblems(plan: Plan, config: Config): string[] {
  const names = config.machines?.map((m) => m.name) ?? [LOCAL_MACHINE];
  return plan.children.flatMap((child, i) =>
    child.machine === undefined || names.includes(child.machine)
      ? []
      : [
          `children[${i}].machine: "${child.machine}" is not a machine of lanes.config.json (child "${child.id}"; machines: ${names.join(', ')})`,
        ],
  );
}
