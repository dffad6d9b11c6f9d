import type { Config } from '../../core/settings/config.js';
import { executorProfiles } from '../../core/settings/config.js';
import type { Plan } from '../../core/plan/plan.js';
import type { ChildPreferences, Preferences, Sourced } from '../../core/settings/preferences.js';

// The confirmation's lines about executor preferences: each resolved value with where it
// comes from, children with the same values on one line, and values given but not used.

function shown(name: string, v: Sourced<string> | null, argv: readonly string[], placeholder: string) {
  if (v === null) return null;
  const used = argv.some((arg) => arg.includes(`{${placeholder}}`));
  return `${name} ${v.value} (${v.label}${used ? '' : `; its profile has no {${placeholder}}`})`;
}

function lineFor(p: ChildPreferences, config: Config): string {
  const argv = executorProfiles(config)[p.executor.value]?.argv ?? [];
  return [
    `executor ${p.executor.value} (${p.executor.label})`,
    shown('model', p.model, argv, 'model'),
    shown('effort', p.effort, argv, 'effort'),
    shown('permission mode', p.permissionMode, argv, 'permission_mode'),
    shown('approval policy', p.approvalPolicy, argv, 'approval_policy'),
  ]
    .filter((part) => part !== null)
    .join(', ');
}

export function describePreferences(plan: Plan, prefs: Preferences, config: Config): string[] {
  const groups = new Map<string, string[]>();
  const unused = new Set<string>();
  for (const child of plan.children) {
    const p = prefs.children[child.id];
    if (!p) continue;
    const line = lineFor(p, config);
    groups.set(line, [...(groups.get(line) ?? []), child.id]);
    for (const note of p.unused) unused.add(note);
  }
  const lines = [...groups].map(([line, ids]) =>
    groups.size === 1 ? `  ${line}` : `  ${ids.join(', ')}: ${line}`,
  );
  return [...lines, ...[...unused].map((note) => `  ${note}`)];
}
