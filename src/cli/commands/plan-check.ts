import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { resolveSettings } from '../../core/settings/batch-settings.js';
import { DEFAULT_CONFIG } from '../../core/settings/config.js';
import { loadConfig } from '../../store/config-file.js';
import { badInput } from '../../core/basics/errors.js';
import { planDigest } from '../../core/plan/plan.js';
import { loadPlan } from '../../store/plan-file.js';
import { computeWaves } from '../../core/plan/waves.js';
import { readLaneDirectives } from '../../store/lane-directives-file.js';
import { parseCommand } from '../args.js';
import { count } from '../plural.js';
import { bold, dim } from '../batch-run/style.js';
import type { CommandContext } from '../context.js';

export const planCheckUsage = 'lanes plan check <plan>';

/** `lanes plan check <plan>`: validate, then print the waves. Writes nothing. */
export function planCheck(ctx: CommandContext, argv: string[]): number {
  const { positionals } = parseCommand('plan check', argv, {}, 1);
  const file = positionals[0];
  if (!file) throw badInput('usage', `usage: ${planCheckUsage}`);
  const plan = loadPlan(resolve(ctx.cwd, file));
  const root = workTreeRoot(ctx.cwd);
  const config = root ? loadConfig(root) : DEFAULT_CONFIG;
  const settings = resolveSettings(plan, config, {}, root ? readLaneDirectives(root) : {});
  const waves = computeWaves(plan.children, settings.maxParallel);
  const out: string[] = [];
  out.push(
    `${bold(`plan ${plan.batch}`)}: ${count(plan.children.length, 'child', 'children')} in ${count(waves.length, 'wave')}, ` +
      `max_parallel ${settings.maxParallel}, budget ${count(settings.budget.max_children, 'child', 'children')} / ` +
      count(settings.budget.qa_failure_limit, 'QA failure'),
  );
  out.push(dim(`base ${plan.base}, digest ${planDigest(plan)}`));
  waves.forEach((wave, i) => {
    out.push(`wave ${i + 1}: ${wave.map((c) => `${c.id} (${settings.executors[c.id]})`).join(', ')}`);
  });
  const finals = plan.final_checks ?? config.final_checks;
  if (finals.length > 0)
    out.push(
      `final checks${plan.final_checks ? '' : ' (from the config)'}: ${finals.map((c) => c.id).join(', ')}`,
    );
  ctx.stdout(`${out.join('\n')}\n`);
  return 0;
}

/**
 * The root of the work tree around `cwd` (its config and AGENTS.md / CLAUDE.md are read),
 * or null outside one. The root is the nearest directory holding a `.git` (a directory, or
 * the file of a linked worktree), as git finds it; looking on disk instead of asking git
 * keeps `plan check` free of a git process and of the process library (a third of its
 * start-up time).
 */
export function workTreeRoot(cwd: string): string | null {
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    if (existsSync(join(dir, '.git'))) return dir;
    if (dirname(dir) === dir) return null;
  }
}
