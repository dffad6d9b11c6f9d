import { openAttempt } from '../records/kernel.js';
import type { Attempt, KernelRecord } from '../records/kernel.js';

// What the executor runner does with an executor handoff (DESIGN §7): nothing (an
// executor runs for it, or its exit is on the way to the next tick, or there is no work
// to do), look for the executor of an attempt started before a restart, or start one.
// The runner carries the step out: the host, the kernel writes, the journal.

export type ExecutorStep =
  | { kind: 'none'; why: 'running' | 'exit-queued' | 'no-kernel' | 'no-work' | 'paused' | 'not-in-plan' }
  /** An attempt is open (started, not ended): its executor may still run, or may have ended. */
  | { kind: 'find-again'; attempt: Attempt }
  | { kind: 'start' };

export interface ExecutorFacts {
  handoff: { run_id: string; next_obligation: KernelRecord['next_obligation'] };
  /** The run id of the executor running for this child in this process, if any. */
  liveRunId: string | null;
  /** Its exit is queued for the next tick. */
  exitQueued: boolean;
  /** The child's kernel record (null when it is missing or unreadable: the tick parks it). */
  kernel: KernelRecord | null;
  /** Dispatch is paused (suspect dispatch, or the user): no executor starts, a rework neither. */
  paused: boolean;
  /** The child is in the plan (a replan may have dropped it). */
  inPlan: boolean;
}

export function nextExecutorStep(f: ExecutorFacts): ExecutorStep {
  if (f.liveRunId !== null && f.liveRunId === f.handoff.run_id) return { kind: 'none', why: 'running' };
  if (f.exitQueued) return { kind: 'none', why: 'exit-queued' };
  if (!f.kernel) return { kind: 'none', why: 'no-kernel' };
  // Before anything else: an open attempt's executor is found again, never started twice.
  const open = openAttempt(f.kernel);
  if (open) return { kind: 'find-again', attempt: open };
  if (f.handoff.next_obligation !== 'implement') return { kind: 'none', why: 'no-work' };
  if (f.paused) return { kind: 'none', why: 'paused' };
  if (!f.inPlan) return { kind: 'none', why: 'not-in-plan' };
  return { kind: 'start' };
}
