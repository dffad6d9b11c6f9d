import { badInput } from '../../core/basics/errors.js';
import { TERMINAL_BATCH_STATES } from '../../core/records/record.js';
import type { BatchStore } from '../../store/batch-store.js';

// The batch a command means when none is named (issue 26: land, clean, log and wait
// default to it like status): the only batch there is; else, for a command about a batch
// under way (log, wait), the only one that has not ended; for land, the only completed
// one. Otherwise the message names the batches and how to pick one.

export function theBatch(store: BatchStore, command: 'log' | 'wait' | 'land' | 'clean'): string {
  const all = store.list();
  if (all.length === 1) return all[0]!;
  if (all.length === 0) throw badInput('usage', `lanes ${command}: no batch in this repository`);
  const fits = all.filter((id) => {
    const state = store.read(id)!.batch_state;
    if (command === 'land') return state === 'completed';
    if (command === 'clean') return false;
    return !TERMINAL_BATCH_STATES.has(state);
  });
  if (fits.length === 1) return fits[0]!;
  throw badInput(
    'usage',
    `lanes ${command}: ${all.length} batches here (${all.join(', ')}); name one: lanes ${command} <batch>`,
  );
}
