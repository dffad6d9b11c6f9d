import { badInput } from '../../core/basics/errors.js';
import { landBatch } from '../../coordinator/whole-batch/land-batch.js';
import { findRepo } from '../../store/state-dir.js';
import { batchIdArg, parseCommand } from '../args.js';
import type { CommandContext } from '../context.js';
import { BatchStore } from '../../store/batch-store.js';
import { theBatch } from './the-batch.js';

/** A branch or remote name as an argument: never an option, never a NUL or a space. */
function nameArg(option: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value === '' || value.startsWith('-') || /[\0\s]/.test(value) || value.includes('..'))
    throw badInput('usage', `lanes land: --${option} "${value.slice(0, 200)}" is not a valid name`);
  return value;
}

/** `lanes land [<batch>] [--into <branch>] [--merge] [--push <remote>]` */
export async function landCommand(ctx: CommandContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(
    'land',
    argv,
    { into: { type: 'string' }, merge: { type: 'boolean' }, push: { type: 'string' } },
    1,
  );
  const into = nameArg('into', values.into);
  const push = nameArg('push', values.push);
  const repo = await findRepo(ctx.cwd);
  const batchId = batchIdArg('land', positionals[0]) ?? theBatch(new BatchStore(repo.stateDir), 'land');
  const summary = await landBatch(repo, batchId, {
    ...(into ? { into } : {}),
    ...(push ? { push } : {}),
    merge: values.merge ?? false,
  });
  ctx.stdout(`${summary}\n`);
  return 0;
}
