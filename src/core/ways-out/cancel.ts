import { badInput } from '../basics/errors.js';
import type { BatchRecord } from '../records/record.js';
import { IN_FLIGHT_STATES, SETTLED_FOR_BATCH, TERMINAL_BATCH_STATES } from '../records/record.js';
import { dropChildren } from './drop.js';

// Cancelling a batch (docs/DECISIONS.md, "No dead ends"): the terminal state `cancelled`.
// Every child holding unintegrated work (in flight or parked) is dropped with its
// dependents — its work stays on its lane branch; integrated children stay integrated
// (their lanes are released as usual); pending children stay pending.

export const CANCEL_REASON = 'batch cancelled';

export function cancelRefusal(record: BatchRecord): string | null {
  if (TERMINAL_BATCH_STATES.has(record.batch_state))
    return `batch ${record.batch_id} has ended (${record.batch_state}); nothing to cancel`;
  return null;
}

export function checkCancel(record: BatchRecord): void {
  const why = cancelRefusal(record);
  if (why) throw badInput('usage', `lanes cancel: ${why}`);
}

export function cancelBatch(record: BatchRecord, reason: string = CANCEL_REASON): BatchRecord {
  const why = cancelRefusal(record);
  if (why) throw new Error(`cancel: ${why}`);
  let next = record;
  for (const c of record.children) {
    const holdsWork = IN_FLIGHT_STATES.has(c.state) || c.state === 'needs_human';
    const current = next.children.find((x) => x.task_id === c.task_id)!;
    if (holdsWork && !SETTLED_FOR_BATCH.has(current.state)) next = dropChildren(next, c.task_id, reason);
  }
  // A child skipped because of a parked dependency that is now dropped was dropped with it.
  return { ...next, batch_state: 'cancelled' };
}
