import type { KernelRecord } from '../records/kernel.js';
import { openAttempt } from '../records/kernel.js';
import type { ChildState } from '../records/record.js';
import { addUsage, sumUsage } from '../records/usage.js';
import type { Usage } from '../records/usage.js';

// A coding agent's turn (docs/DECISIONS.md, Agents): an agent that stays alive between
// turns tells lanes through its hook that a turn ended. The kernel then runs QA in the
// lane while the agent waits; the verdict goes back into the same live session (rework
// with the failing checks' output) or lets the agent stop (passed, parked for a human).
// An agent that ends its process at the end of a turn (headless, plain commands) goes the
// exit path instead, and its rework resumes the same conversation by its session id.

/** A turn ended in the running attempt: QA is due while the agent stays alive. */
export function recordTurnEnd(k: KernelRecord, now: string): KernelRecord {
  if (k.lifecycle === 'done') return k;
  const open = openAttempt(k);
  if (!open) return k;
  const attempts = k.attempts.map((a) => (a === open ? { ...a, turns: a.turns + 1 } : a));
  const next = k.next_obligation === 'review' ? 'review' : 'run_qa';
  return { ...k, attempts, next_obligation: next, updated_at: now };
}

/** The agent told its session id (Codex names its thread only once it runs). */
export function recordSessionId(
  k: KernelRecord,
  attemptN: number,
  sessionId: string,
  now: string,
): KernelRecord {
  const attempts = k.attempts.map((a) =>
    a.n === attemptN && a.session_id !== sessionId ? { ...a, session_id: sessionId } : a,
  );
  return attempts.some((a, i) => a !== k.attempts[i]) ? { ...k, attempts, updated_at: now } : k;
}

/** lanes closed the session of a finished attempt: how is recorded (its own quit, or a signal). */
export function recordSessionClosed(
  k: KernelRecord,
  attemptN: number,
  how: 'quit' | 'SIGTERM' | 'SIGKILL',
  exit: { code: number | null; signal: string | null },
  now: string,
): KernelRecord {
  const attempts = k.attempts.map((a) =>
    a.n === attemptN && a.ended_at === null
      ? { ...a, ended_at: now, exit_code: exit.code, signal: exit.signal, closed_by: how }
      : a,
  );
  return { ...k, attempts, updated_at: now };
}

/** The conversation a relaunch continues: the newest attempt's session id, if the agent gave one. */
export function sessionToResume(k: KernelRecord): string | null {
  for (const a of [...k.attempts].reverse()) if (a.session_id) return a.session_id;
  return null;
}

export type TurnVerdict =
  | { kind: 'pending' }
  | { kind: 'continue'; feedback: string }
  | { kind: 'stop'; why: 'passed' | 'review' | 'parked' | 'not-running' };

export interface TurnFacts {
  kernel: KernelRecord;
  childState: ChildState;
  /** The kernel's QA run count when the turn ended: a verdict needs a run after it. */
  qaRunsAtTurnEnd: number;
}

/**
 * What an agent waiting at the end of its turn is told. Rework carries the failing
 * checks' output into the same session; a pass, a review wait or a park lets it stop (a
 * parked agent stays open at its prompt for the human).
 */
export function turnVerdict(f: TurnFacts): TurnVerdict {
  if (f.childState === 'needs_human') return { kind: 'stop', why: 'parked' };
  if (f.kernel.lifecycle === 'done' || f.childState !== 'enrolled')
    return f.kernel.lifecycle === 'done'
      ? { kind: 'stop', why: 'passed' }
      : { kind: 'stop', why: 'not-running' };
  if (f.kernel.qa_runs.length <= f.qaRunsAtTurnEnd) return { kind: 'pending' };
  if (f.kernel.next_obligation === 'review') return { kind: 'stop', why: 'review' };
  if (f.kernel.next_obligation === 'implement' && f.kernel.rework_feedback)
    return { kind: 'continue', feedback: reworkInstruction(f.kernel.rework_feedback) };
  return { kind: 'pending' };
}

/** The next instruction in the same session when the work comes back (QA failed, the reviewer rejected it). */
export function reworkInstruction(feedback: string): string {
  return `lanes sends the task back to you: it is not done yet. Fix what is said below, then end your turn again.\n\n${feedback}`;
}

/** Names the kernel's latest rework (a QA run or a review verdict), to send each one once. */
export function reworkKey(k: KernelRecord): string {
  return `${k.qa_runs.length}|${k.review.at ?? ''}`;
}

/**
 * A rework for an agent that waits at its prompt with no turn pending (it stopped for a
 * review, or parked and the human resumed it): typed into its session once, else null.
 */
export function reworkToType(k: KernelRecord, childState: ChildState, sentKey: string): string | null {
  if (childState !== 'enrolled' || k.next_obligation !== 'implement' || !k.rework_feedback) return null;
  if (!openAttempt(k) || reworkKey(k) === sentKey) return null;
  return reworkInstruction(k.rework_feedback);
}

/** The session of a lane is closed once its work is integrated (or the lane is gone for good). */
export function sessionShouldClose(childState: ChildState): boolean {
  return childState === 'integrated' || childState === 'released' || childState === 'skipped_blocked';
}

/** What a relaunched agent is told when it continues its conversation. */
export function resumeInstruction(k: KernelRecord): string {
  if (k.rework_feedback) return reworkInstruction(k.rework_feedback);
  return 'lanes restarted while you were working on this task. Continue the task where you left off, then end your turn.';
}

/**
 * What the agent reported it spent, into an attempt (issue 27: tokens per lane, live).
 * `added`: the report is new spending, added to the attempt's. `session-total`: the
 * report is the session's running total (Codex's `turn.completed` counts the whole thread,
 * earlier attempts of a resumed session included), so the attempt gets what is beyond the
 * earlier attempts of the same session.
 */
export function recordUsage(
  k: KernelRecord,
  attemptN: number,
  usage: Usage,
  is: 'added' | 'session-total',
  now: string,
): KernelRecord {
  const attempts = k.attempts.map((a) => {
    if (a.n !== attemptN) return a;
    if (is === 'added') return { ...a, usage: addUsage(a.usage ?? null, usage)! };
    const same = k.attempts.filter((e) => e.n < attemptN && a.session_id && e.session_id === a.session_id);
    const before = sumUsage(same);
    const beyond = (key: 'input_tokens' | 'output_tokens') => Math.max(0, usage[key] - (before?.[key] ?? 0));
    const cost = usage.cost_usd === null ? null : Math.max(0, usage.cost_usd - (before?.cost_usd ?? 0));
    return {
      ...a,
      usage: { input_tokens: beyond('input_tokens'), output_tokens: beyond('output_tokens'), cost_usd: cost },
    };
  });
  return { ...k, attempts, updated_at: now };
}
