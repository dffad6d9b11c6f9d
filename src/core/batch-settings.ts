import type { Config } from './config.js';
import { executorProfiles } from './config.js';
import { badInput } from './errors.js';
import type { Plan, PlanChild } from './plan.js';
import { DEFAULT_MAX_PARALLEL, DEFAULT_QA_FAILURE_LIMIT } from './plan.js';

// What a batch runs with once plan, config and command-line overrides are combined.

export interface BatchSettings {
  maxParallel: number;
  budget: { max_children: number; qa_failure_limit: number };
  /** Executor profile name per child id. */
  executors: Record<string, string>;
}

export interface SettingsOverrides {
  parallel?: number;
  executor?: string;
}

export function resolveSettings(
  plan: Plan,
  config: Config,
  overrides: SettingsOverrides = {},
): BatchSettings {
  const profiles = executorProfiles(config);
  const fallback = overrides.executor ?? plan.executor ?? config.default_executor ?? 'claude';
  const problems: string[] = [];
  const executors: Record<string, string> = {};
  plan.children.forEach((child: PlanChild, i) => {
    const name = child.executor ?? fallback;
    executors[child.id] = name;
    const where = child.executor ? `children[${i}].executor` : overrides.executor ? '--executor' : 'executor';
    if (!(name in profiles))
      problems.push(`${where}: unknown executor profile "${name}" (child "${child.id}")`);
    else if (profiles[name]?.argv.some((arg) => arg.includes('{run}')) && !child.run)
      problems.push(`children[${i}].run: required by the "${name}" executor (child "${child.id}")`);
  });
  if (problems.length)
    throw badInput('plan_invalid', `plan cannot run:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  return {
    maxParallel: overrides.parallel ?? plan.max_parallel ?? config.max_parallel ?? DEFAULT_MAX_PARALLEL,
    budget: {
      max_children: plan.budget.max_children ?? plan.children.length,
      qa_failure_limit: plan.budget.qa_failure_limit ?? DEFAULT_QA_FAILURE_LIMIT,
    },
    executors,
  };
}
