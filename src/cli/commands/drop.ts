import { TERMINAL_BATCH_STATES } from '../../core/records/record.js';
import { badInput } from '../../core/basics/errors.js';
import { checkDrop, DROPPED_BY_USER } from '../../core/ways-out/drop.js';
import { ID_PATTERN } from '../../core/basics/ids.js';
import { BatchStore } from '../../store/batch-store.js';
import { findRepo } from '../../store/state-dir.js';
import { batchIdArg, parseCommand } from '../args.js';
import type { CommandContext } from '../context.js';
import { carryOut } from '../ways-out.js';

/** `lanes drop <batch> <child> [--reason TEXT]`: the child and its dependents leave the batch. */
export async function dropCommand(ctx: CommandContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand('drop', argv, { reason: { type: 'string' } }, 2);
  const batchId = batchIdArg('drop', positionals[0]);
  const taskId = positionals[1];
  if (!batchId || !taskId) throw badInput('usage', 'usage: lanes drop <batch> <child> [--reason TEXT]');
  if (!ID_PATTERN.test(taskId))
    throw badInput('usage', `lanes drop: "${taskId.slice(0, 200)}" is not a valid child id`);
  const reason = values.reason?.trim() || DROPPED_BY_USER;
  const repo = await findRepo(ctx.cwd);
  const record = new BatchStore(repo.stateDir).read(batchId);
  if (!record) throw badInput('state_missing', `no batch named "${batchId}"`);
  if (TERMINAL_BATCH_STATES.has(record.batch_state))
    throw badInput('usage', `lanes drop: batch ${batchId} has ended (${record.batch_state})`);
  const child = record.children.find((c) => c.task_id === taskId);
  if (child?.state !== 'dropped') checkDrop(record, taskId); // (dropped already: the lane may still go to the trash)
  return carryOut(ctx, {
    repo,
    batchId,
    request: { action: 'drop', task_id: taskId, reason: child?.state === 'dropped' ? child.reason! : reason },
    command: ['lanes', 'drop', ...argv].join(' '),
    done: (r) => r.children.find((c) => c.task_id === taskId)?.state === 'dropped',
  });
}
