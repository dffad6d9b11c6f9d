import { existsSync, writeFileSync } from 'node:fs';
import { extname, relative, resolve } from 'node:path';
import { badInput } from '../../core/basics/errors.js';
import { CONFIG_FILE } from '../../core/settings/config.js';
import { parseCommand } from '../args.js';
import type { CommandContext } from '../context.js';
import { STARTER_PLAN, starterConfig } from '../starter-files.js';
import { workTreeRoot } from './plan-check.js';

export const DEFAULT_STARTER = 'plan.yaml';

/**
 * `lanes init [<plan>] [--config]`: a commented starter plan and, with --config,
 * lanes.config.json at the work tree's root (where lanes reads it). Nothing is
 * overwritten: when a file is there already, nothing at all is written (exit 2).
 */
export function initCommand(ctx: CommandContext, argv: string[]): number {
  const { values, positionals } = parseCommand('init', argv, { config: { type: 'boolean' } }, 1);
  const plan = resolve(ctx.cwd, positionals[0] ?? DEFAULT_STARTER);
  const ext = extname(plan).toLowerCase();
  if (ext !== '.yaml' && ext !== '.yml')
    throw badInput('usage', `lanes init: the starter plan is YAML (with comments): name it .yaml or .yml`);
  const files: [string, string][] = [[plan, STARTER_PLAN]];
  if (values.config) files.push([resolve(workTreeRoot(ctx.cwd) ?? ctx.cwd, CONFIG_FILE), starterConfig()]);
  const there = files.filter(([file]) => existsSync(file)).map(([file]) => relative(ctx.cwd, file) || file);
  if (there.length > 0)
    throw badInput(
      'file_exists',
      `lanes init: ${there.join(' and ')} already there (nothing written; move it away or name another file)`,
    );
  // 'wx': a file that appeared since the look above is still not overwritten.
  for (const [file, text] of files) writeFileSync(file, text, { flag: 'wx' });
  const names = files.map(([file]) => relative(ctx.cwd, file));
  ctx.stdout(
    `wrote ${names.join(' and ')}\n` +
      `next: edit it, then lanes plan check ${names[0]} and lanes start ${names[0]}\n`,
  );
  return 0;
}
