import { badInput } from '../../core/basics/errors.js';
import { CANCEL_REASON, checkCancel } from '../../core/ways-out/cancel.js';
import { BatchStore } from '../../store/batch-store.js';
import { findRepo } from '../../store/state-dir.js';
import { batchIdArg, parseCommand } from '../args.js';
import type { CommandContext } from '../context.js';
import { carryOut } from '../ways-out.js';

/** `lanes cancel <batch> [--reason TEXT]`: the batch ends `cancelled`; unintegrated work stays on lane branches. */
export async function cancelCommand(ctx: CommandContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand('cancel', argv, { reason: { type: 'string' } }, 1);
  const batchId = batchIdArg('cancel', positionals[0]);
  if (!batchId) throw badInput('usage', 'usage: lanes cancel <batch> [--reason TEXT]');
  const repo = await findRepo(ctx.cwd);
  const record = new BatchStore(repo.stateDir).read(batchId);
  if (!record) throw badInput('state_missing', `no batch named "${batchId}"`);
  // Cancelled already (a crash in the middle of a cancel): what is left — executors,
  // releases, the trash — is finished; anything else that has ended is refused.
  if (record.batch_state !== 'cancelled') checkCancel(record);
  return carryOut(ctx, {
    repo,
    batchId,
    request: { action: 'cancel', reason: values.reason?.trim() || CANCEL_REASON },
    command: ['lanes', 'cancel', ...argv].join(' '),
    done: (r) => r.batch_state === 'cancelled',
  });
}
