import { ExitCode } from '../core/basics/errors.js';
import type { BatchState } from '../core/records/record.js';

/** DESIGN §9: start, resume, demo and wait exit by the batch state they end on. */
export function exitCodeForState(state: BatchState, paused = false): number {
  if (state === 'completed') return ExitCode.ok;
  if (state === 'failed' || state === 'rejected' || state === 'cancelled') return ExitCode.failed;
  if (state === 'needs_human' || state === 'budget_stopped' || paused) return ExitCode.needsHuman;
  return ExitCode.needsHuman; // stopped while still running: a human stopped it
}

/**
 * `lanes wait --timeout S` ran out before the batch reached a state it waits for: an exit
 * code of its own (not 1, "unexpected error"), so a script can tell "not yet" from a crash.
 */
export const WAIT_TIMED_OUT = 5;
