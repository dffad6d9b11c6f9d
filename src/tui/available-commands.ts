import { CHILD_STATES, SETTLED_FOR_BATCH, TERMINAL_BATCH_STATES } from '../core/records/record.js';
import type { Command } from './keymap.js';

// Which commands apply now: the footer names them, and the keys of the ways out (drop,
// cancel) check their states before they ask.

/** The batch states no way out applies to any more. */
export const ENDED: ReadonlySet<string> = TERMINAL_BATCH_STATES;
/** The child states `D` applies to (not integrated, not dropped). */
export const DROPPABLE: ReadonlySet<string> = new Set(CHILD_STATES.filter((s) => !SETTLED_FOR_BATCH.has(s)));

/** The commands the footer shows for the batch state and the selected lane. */
export function availableCommands(
  batchState: string,
  current: { state: string; reviewPending: boolean } | undefined,
  hasPane: boolean,
): Command[] {
  const out: Command[] = ['select-next'];
  if (hasPane) out.push('attach');
  out.push('grid', 'diff', 'qa-log', 'shell');
  if (batchState === 'needs_human' || current?.state === 'needs_human') out.push('resume', 'retry');
  if (current?.reviewPending) out.push('approve', 'reject');
  // (the footer names drop and cancel where a batch stopped; the keys work whenever they apply)
  const stopped = batchState === 'needs_human' || batchState === 'budget_stopped';
  if (current && (current.state === 'needs_human' || current.state === 'skipped_blocked') && stopped)
    out.push('drop');
  if (stopped) out.push('cancel');
  if (batchState === 'completed') out.push('land');
  out.push('pause', 'help', 'quit');
  return out;
}
