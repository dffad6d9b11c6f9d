import type { Config } from '../../core/settings/config.js';
import { executorProfiles } from '../../core/settings/config.js';
import { badInput } from '../../core/basics/errors.js';
import type { Plan } from '../../core/plan/plan.js';
import type { Preferences } from '../../core/settings/preferences.js';
// (from its own file, not the launch folder's index: the index brings the attempt's modules,
// and their record schemas, onto the path of the first frame)
import { fillArgv } from '../../coordinator/executors/launch/executor-launch.js';
import { findProgram } from '../../hosts/program-path.js';

// The executor preflight: before a batch is confirmed (or resumed), every child that may
// still start an executor must name a program that exists. A missing agent is refused
// here, with exit 2 and nothing written, not found later as a string of failed attempts.

export function checkExecutorPrograms(
  plan: Plan,
  preferences: Preferences,
  config: Config,
  repoRoot: string,
  children: readonly string[] = plan.children.map((c) => c.id),
  env: NodeJS.ProcessEnv = process.env,
): void {
  const profiles = executorProfiles(config);
  const missing = new Map<string, { program: string; profile: string; children: string[] }>();
  // (the children of a profile mostly run one program: each is looked for once, not once a child)
  const found = new Map<string, boolean>();
  for (const child of plan.children) {
    if (!children.includes(child.id)) continue;
    const prefs = preferences.children[child.id];
    const profile = prefs ? profiles[prefs.executor.value] : undefined;
    if (!prefs || !profile) continue;
    const argv = fillArgv(profile, {
      prompt: 'prompt',
      prompt_file: 'prompt.md',
      task: child.id,
      lane: repoRoot,
      run: child.run ?? '',
      model: prefs.model?.value,
      effort: prefs.effort?.value,
    });
    const program = argv[0] ?? '';
    const searchPath = profile.env.PATH ?? env.PATH;
    const look = `${program}\0${searchPath}`;
    let exists = found.get(look);
    if (exists === undefined) {
      exists = program !== '' && findProgram(program, searchPath, repoRoot) !== null;
      found.set(look, exists);
    }
    if (exists) continue;
    const key = `${prefs.executor.value}\0${program}`;
    const entry = missing.get(key) ?? { program, profile: prefs.executor.value, children: [] };
    entry.children.push(child.id);
    missing.set(key, entry);
  }
  if (missing.size === 0) return;
  const lines = [...missing.values()].map(
    (m) =>
      `  executor profile "${m.profile}" runs "${m.program}", which is ${m.program.includes('/') ? 'not an executable file' : 'not on PATH'} (${m.children.length === 1 ? 'child' : 'children'} ${m.children.join(', ')})`,
  );
  throw badInput(
    'executor_missing',
    `executor not found:\n${lines.join('\n')}\n  install it, or pick another executor (--executor, or the plan's executor:)`,
  );
}
