import { ExitCode } from '../basics/errors.js';
import type { BatchState } from '../records/record.js';
import { TERMINAL_BATCH_STATES } from '../records/record.js';

// When `lanes wait <batch> --until <states>` stops waiting, and with which exit code
// (docs/DECISIONS.md, "No dead ends"): a state asked for → 0; a stop for a human that was
// not asked for (needs_human, budget_stopped, dispatch paused with no coordinator left)
// → 3 at once, since the batch cannot go on by itself; a terminal state not asked for → 4.

export type WaitVerdict = { done: false } | { done: true; exitCode: number };

export const HUMAN_STOPS: ReadonlySet<BatchState> = new Set(['needs_human', 'budget_stopped']);

export function waitVerdict(state: BatchState, wanted: readonly BatchState[], paused = false): WaitVerdict {
  if (wanted.includes(state)) return { done: true, exitCode: ExitCode.ok };
  if (TERMINAL_BATCH_STATES.has(state)) return { done: true, exitCode: ExitCode.failed };
  if (HUMAN_STOPS.has(state) || paused) return { done: true, exitCode: ExitCode.needsHuman };
  return { done: false };
}
