import type { Config, ExecutorProfile } from './config.js';
import { executorProfiles } from './config.js';
import type { LaneDirectives } from './lane-directives.js';
import type { Plan, PlanChild } from '../plan/plan.js';
import { DEFAULT_MAX_PARALLEL } from '../plan/plan.js';

// Which executor, model, effort and permission mode each child runs with, and where each
// value comes from (docs/DECISIONS.md "Executor preferences"). Sources, highest first: the
// command line, the plan (the child, then the plan's defaults), lanes.config.json, the
// repository's AGENTS.md / CLAUDE.md, the default. Pure: the caller reads the files.

/** Higher wins. A child's own `executor:` ranks as the plan, but is looked at first (see below). */
export const SOURCE_RANK = { 'command line': 5, plan: 4, config: 3, repository: 2, default: 1 } as const;
export type SourceKind = keyof typeof SOURCE_RANK;

export interface Sourced<T> {
  value: T;
  kind: SourceKind;
  /** What the confirmation screen shows in brackets: `plan`, `config`, `AGENTS.md:3` … */
  label: string;
}

export interface CommandLinePreferences {
  executor?: string;
  model?: string;
  effort?: string;
  parallel?: number;
}

export interface ChildPreferences {
  executor: Sourced<string>;
  model: Sourced<string> | null;
  effort: Sourced<string> | null;
  /** From the profile in lanes.config.json only: the user's permissions stay the user's. */
  permissionMode: Sourced<string> | null;
  approvalPolicy: Sourced<string> | null;
  /** Values given but not used for this child, each with why (shown on the confirmation). */
  unused: string[];
}

export interface Preferences {
  maxParallel: Sourced<number>;
  children: Record<string, ChildPreferences>;
  /** Executors that do not exist, or a `{run}` profile without `run:` — exit 2 when not empty. */
  problems: string[];
}

const at = <T>(value: T, kind: SourceKind, label: string = kind): Sourced<T> => ({ value, kind, label });

function first<T>(...candidates: (Sourced<T> | null)[]): Sourced<T> | null {
  return candidates.find((c) => c !== null) ?? null;
}

const given = <T>(value: T | undefined, kind: SourceKind, label?: string): Sourced<T> | null =>
  value === undefined ? null : at(value, kind, label);

export function resolvePreferences(
  plan: Plan,
  config: Config,
  cli: CommandLinePreferences = {},
  directives: LaneDirectives = {},
): Preferences {
  const profiles = executorProfiles(config);
  const problems: string[] = [];
  // A directive naming no profile is wrong even where a higher source picks the executor.
  const named = directives.executor;
  if (named && !(named.value in profiles))
    problems.push(`${named.where}: unknown executor profile "${named.value}" (Lane executor)`);
  const children: Record<string, ChildPreferences> = {};
  plan.children.forEach((child, i) => {
    const prefs = childPreferences(child, plan, config, profiles, cli, directives);
    children[child.id] = prefs;
    const name = prefs.executor.value;
    const where = child.executor
      ? `children[${i}].executor`
      : prefs.executor.kind === 'command line'
        ? '--executor'
        : prefs.executor.kind === 'config'
          ? 'default_executor'
          : 'executor';
    if (!(name in profiles)) {
      if (prefs.executor.kind !== 'repository')
        problems.push(`${where}: unknown executor profile "${name}" (child "${child.id}")`);
    } else if (profiles[name]?.argv.some((arg) => arg.includes('{run}')) && !child.run)
      problems.push(`children[${i}].run: required by the "${name}" executor (child "${child.id}")`);
  });
  const maxParallel =
    first(
      given(cli.parallel, 'command line'),
      given(plan.max_parallel, 'plan'),
      given(config.max_parallel, 'config'),
      // (a pool of machines runs as many lanes as it has slots, unless told fewer)
      given(totalSlots(config), 'config', 'slots of the machines'),
      given(directives.maxParallel?.value, 'repository', directives.maxParallel?.where),
    ) ?? at(DEFAULT_MAX_PARALLEL, 'default');
  return { maxParallel, children, problems };
}

function childPreferences(
  child: PlanChild,
  plan: Plan,
  config: Config,
  profiles: Record<string, ExecutorProfile>,
  cli: CommandLinePreferences,
  directives: LaneDirectives,
): ChildPreferences {
  // A child's own executor comes before --executor: it is part of the task (a `script`
  // child needs its `run:`). Model and effort are tuning: there the command line wins.
  const executor =
    first(
      given(child.executor, 'plan'),
      given(cli.executor, 'command line'),
      given(plan.executor, 'plan'),
      given(config.default_executor, 'config'),
      given(directives.executor?.value, 'repository', directives.executor?.where),
    ) ?? at('claude', 'default');
  const profile = profiles[executor.value];
  const profileKind: SourceKind =
    profile && config.executors[executor.value] !== undefined ? 'config' : 'default';
  const profileLabel = profileKind === 'config' ? `config executors.${executor.value}` : 'built-in profile';
  const unused: string[] = [];
  const pick = (what: 'model' | 'effort'): Sourced<string> | null => {
    const loose = [given(cli[what], 'command line'), given(child[what], 'plan'), given(plan[what], 'plan')];
    const fromProfile = given(profile?.[what], profileKind, profileLabel);
    const fromRepo = given(directives[what]?.value, 'repository', directives[what]?.where);
    // A model or effort not written into a profile belongs to the executor its source had
    // in mind: it applies only when that source ranks at least as high as the one that
    // chose the executor. (An AGENTS.md model is not passed to the executor --executor picked.)
    const fits = (c: Sourced<string> | null) =>
      c !== null && SOURCE_RANK[c.kind] >= SOURCE_RANK[executor.kind];
    for (const c of [...loose, fromProfile, fromRepo]) {
      if (c === null) continue;
      if (c === fromProfile || fits(c)) return c;
      unused.push(
        `${what} ${c.value} (${c.label}) not used: executor ${executor.value} is from ${executor.label}`,
      );
    }
    return null;
  };
  return {
    executor,
    model: pick('model'),
    effort: pick('effort'),
    permissionMode: given(profile?.permission_mode, profileKind, profileLabel),
    approvalPolicy: given(profile?.approval_policy, profileKind, profileLabel),
    unused,
  };
}

/**
 * The plan as confirmed: each child carries the executor, model and effort it resolved to,
 * so a resume (which has no command line, and may find other files) runs what was shown.
 */
export function planWithPreferences(plan: Plan, prefs: Preferences): Plan {
  return {
    ...plan,
    children: plan.children.map((child) => {
      const p = prefs.children[child.id];
      if (!p) return child;
      const { model: _m, effort: _e, ...rest } = child;
      return {
        ...rest,
        executor: p.executor.value,
        ...(p.model ? { model: p.model.value } : {}),
        ...(p.effort ? { effort: p.effort.value as NonNullable<PlanChild['effort']> } : {}),
      };
    }),
  };
}

function totalSlots(config: Config): number | undefined {
  return config.machines?.reduce((sum, m) => sum + m.slots, 0);
}
