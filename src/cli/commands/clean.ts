import { badInput } from '../../core/basics/errors.js';
import { cleanBatch } from '../../coordinator/whole-batch/clean-batch.js';
import { findRepo } from '../../store/state-dir.js';
import { batchIdArg, parseCommand } from '../args.js';
import type { CommandContext } from '../context.js';

/** `lanes clean <batch> [--force]` */
export async function cleanCommand(ctx: CommandContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand('clean', argv, { force: { type: 'boolean' } }, 1);
  const batchId = batchIdArg('clean', positionals[0]);
  if (!batchId) throw badInput('usage', 'usage: lanes clean <batch> [--force]');
  const repo = await findRepo(ctx.cwd);
  ctx.stdout(`${await cleanBatch(repo, batchId, values.force ?? false)}\n`);
  return 0;
}
