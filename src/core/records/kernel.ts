import { z } from 'zod';
import type { AcceptanceCheck } from '../plan/plan.js';
import { scopeMatcher } from '../plan/scope.js';
import { usageSchema } from './usage.js';

// The lane kernel (DESIGN §5): one record per child in tasks/<child>.json. It owns the run
// id, the executor attempts, the QA runs and the review verdict. QA decides from checks
// and git facts only — never from the executor's exit code or what it printed.

export const KERNEL_CONTRACT = 'lanes/task/v1';
const attemptSchema = z.strictObject({
  n: z.number().int().positive(),
  started_at: z.string(),
  ended_at: z.string().nullable(),
  exit_code: z.number().int().nullable(),
  signal: z.string().nullable(),
  host: z.string(),
  pane_id: z.string().nullable(),
  /** The exit wrapper's pid and /proc start time, to find a live executor after a restart. */
  pid: z.number().int().nullable().default(null),
  pid_start: z.string().nullable().default(null),
  /** Where the exit wrapper writes the executor's status. */
  status_path: z.string().nullable().default(null),
  /** The agent's own session or thread id, to resume its conversation (docs/DECISIONS.md, Agents). */
  session_id: z.string().nullable().default(null),
  /** This attempt continues the conversation of an earlier one (same session id). */
  resumed: z.boolean().default(false),
  /** sha256 of the attempt's hook token; the token itself only the agent's environment has. */
  hook_token_sha256: z.string().nullable().default(null),
  /** Turn ends the agent reported while it stayed alive. */
  turns: z.number().int().nonnegative().default(0),
  /** How lanes closed the session after its work was done: its own quit, or a signal. */
  closed_by: z.enum(['quit', 'SIGTERM', 'SIGKILL']).nullable().default(null),
  usage: usageSchema.optional(), // what the agent reported it spent (usage.ts); absent: nothing
});
export type Attempt = z.output<typeof attemptSchema>;

const checkRunSchema = z.strictObject({
  id: z.string(),
  exit_code: z.number().int().nullable(),
  timed_out: z.boolean(),
  duration_ms: z.number().nonnegative(),
  log_path: z.string().nullable(),
  /** The last lines of the check's output, for the rework prompt. */
  tail: z.string(),
});
export type CheckRun = z.output<typeof checkRunSchema>;

/** A check that did not pass: a non-zero exit, or its timeout. */
export function checkFailed(run: CheckRun): boolean {
  return run.exit_code !== 0 || run.timed_out;
}

const qaRunSchema = z.strictObject({
  n: z.number().int().positive(),
  at: z.string(),
  passed: z.boolean(),
  checks: z.array(checkRunSchema),
  changed_paths: z.array(z.string()),
  outside_scope: z.array(z.string()),
  empty_delivery: z.boolean(),
});
export type QaRun = z.output<typeof qaRunSchema>;

export const kernelRecordSchema = z.strictObject({
  contract: z.literal(KERNEL_CONTRACT),
  batch_id: z.string(),
  task_id: z.string(),
  run_id: z.string().min(1),
  lane_path: z.string(),
  base_head: z.string(),
  lifecycle: z.enum(['active', 'done']),
  next_obligation: z.enum(['implement', 'run_qa', 'review', 'none']),
  attempts: z.array(attemptSchema),
  qa_runs: z.array(qaRunSchema),
  /** QA runs before this index no longer count toward the failure limit (a human resumed). */
  qa_counted_from: z.number().int().nonnegative(),
  review: z.strictObject({
    required: z.boolean(),
    verdict: z.enum(['approved', 'rejected']).nullable(),
    at: z.string().nullable(),
  }),
  rework_feedback: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type KernelRecord = z.output<typeof kernelRecordSchema>;

export function newKernelRecord(fields: {
  batchId: string;
  taskId: string;
  runId: string;
  lanePath: string;
  baseHead: string;
  reviewRequired: boolean;
  now: string;
}): KernelRecord {
  return {
    contract: KERNEL_CONTRACT,
    batch_id: fields.batchId,
    task_id: fields.taskId,
    run_id: fields.runId,
    lane_path: fields.lanePath,
    base_head: fields.baseHead,
    lifecycle: 'active',
    next_obligation: 'implement',
    attempts: [],
    qa_runs: [],
    qa_counted_from: 0,
    review: { required: fields.reviewRequired, verdict: null, at: null },
    rework_feedback: null,
    created_at: fields.now,
    updated_at: fields.now,
  };
}

export function failedQaCount(k: KernelRecord): number {
  return k.qa_runs.slice(k.qa_counted_from).filter((run) => !run.passed).length;
}

export interface AttemptStart {
  host: string;
  paneId: string | null;
  pid: number | null;
  pidStart: string | null;
  statusPath: string | null;
  sessionId?: string | null;
  resumed?: boolean;
  hookTokenSha256?: string | null;
}

export function startAttempt(k: KernelRecord, start: AttemptStart, now: string): KernelRecord {
  const attempt: Attempt = {
    n: k.attempts.length + 1,
    started_at: now,
    ended_at: null,
    exit_code: null,
    signal: null,
    host: start.host,
    pane_id: start.paneId,
    pid: start.pid,
    pid_start: start.pidStart,
    status_path: start.statusPath,
    session_id: start.sessionId ?? null,
    resumed: start.resumed ?? false,
    hook_token_sha256: start.hookTokenSha256 ?? null,
    turns: 0,
    closed_by: null,
  };
  return {
    ...k,
    next_obligation: k.next_obligation === 'review' ? 'review' : 'implement',
    attempts: [...k.attempts, attempt],
    updated_at: now,
  };
}

/** The running attempt (started, no exit recorded), if any. */
export function openAttempt(k: KernelRecord): Attempt | null {
  const last = k.attempts.at(-1);
  return last && last.ended_at === null ? last : null;
}

/** An attempt whose executor vanished without a recorded exit (lanes was gone meanwhile). */
export function abandonAttempt(k: KernelRecord, now: string): KernelRecord {
  const attempts = k.attempts.map((a, i) =>
    i === k.attempts.length - 1 && a.ended_at === null ? { ...a, ended_at: now, signal: 'lost' } : a,
  );
  return { ...k, attempts, updated_at: now };
}

/** Records the end of the running attempt; the next obligation becomes QA. */
export function recordExit(
  k: KernelRecord,
  exit: { code: number | null; signal: string | null; host?: string },
  now: string,
): KernelRecord {
  if (k.lifecycle === 'done') return k;
  const attempts = [...k.attempts];
  const last = attempts.at(-1);
  if (last && last.ended_at === null)
    attempts[attempts.length - 1] = { ...last, ended_at: now, exit_code: exit.code, signal: exit.signal };
  else
    attempts.push({
      n: attempts.length + 1,
      started_at: now,
      ended_at: now,
      exit_code: exit.code,
      signal: exit.signal,
      host: exit.host ?? 'external',
      pane_id: null,
      pid: null,
      pid_start: null,
      status_path: null,
      session_id: null,
      resumed: false,
      hook_token_sha256: null,
      turns: 0,
      closed_by: null,
    });
  const next = k.next_obligation === 'review' ? 'review' : 'run_qa';
  return { ...k, attempts, next_obligation: next, updated_at: now };
}

export interface QaInputs {
  scope: readonly string[];
  changedPaths: readonly string[];
  checks: CheckRun[];
}

const TAIL_LINES = 40;
export function tailOf(text: string, lines = TAIL_LINES): string {
  return text.split('\n').slice(-lines).join('\n');
}

/** Applies a QA run's results: pass → review or done; fail → rework with the failing output. */
export function applyQa(k: KernelRecord, inputs: QaInputs, now: string): KernelRecord {
  const inScope = scopeMatcher(inputs.scope);
  const outside = inputs.changedPaths.filter((p) => !inScope(p));
  const empty = inputs.changedPaths.length === 0;
  const failing = inputs.checks.filter(checkFailed);
  const passed = !empty && outside.length === 0 && failing.length === 0;
  const run: QaRun = {
    n: k.qa_runs.length + 1,
    at: now,
    passed,
    checks: inputs.checks,
    changed_paths: [...inputs.changedPaths],
    outside_scope: outside,
    empty_delivery: empty,
  };
  const qa_runs = [...k.qa_runs, run];
  if (passed) {
    const review = k.review.required && k.review.verdict !== 'approved';
    return {
      ...k,
      qa_runs,
      lifecycle: review ? 'active' : 'done',
      next_obligation: review ? 'review' : 'none',
      rework_feedback: null,
      updated_at: now,
    };
  }
  return {
    ...k,
    qa_runs,
    next_obligation: 'implement',
    rework_feedback: reworkFeedback(run),
    updated_at: now,
  };
}

export function reworkFeedback(run: QaRun): string {
  const parts: string[] = [`QA run ${run.n} failed.`];
  if (run.empty_delivery)
    parts.push('No change was made in the lane: the task needs a change inside its scope.');
  if (run.outside_scope.length)
    parts.push(
      `These paths are outside the task's scope; revert them:\n${run.outside_scope.map((p) => `  ${p}`).join('\n')}`,
    );
  for (const check of run.checks) {
    if (!checkFailed(check)) continue;
    const why = check.timed_out ? 'timed out' : `exited ${check.exit_code ?? 'without a code'}`;
    parts.push(`Check ${check.id} ${why}. Last lines of its output:\n${check.tail}`);
  }
  return parts.join('\n\n');
}

/** A human's verdict on a lane waiting for review. */
export function applyReview(
  k: KernelRecord,
  verdict: 'approved' | 'rejected',
  note: string | null,
  now: string,
): KernelRecord {
  if (k.next_obligation !== 'review') return k;
  const review = { ...k.review, verdict, at: now };
  if (verdict === 'approved')
    return { ...k, review, lifecycle: 'done', next_obligation: 'none', updated_at: now };
  return {
    ...k,
    review: { ...review, verdict: null },
    next_obligation: 'implement',
    rework_feedback: `The reviewer rejected the change.${note ? `\n${note}` : ''}`,
    updated_at: now,
  };
}

/** After a human resumes a parked lane: look at it again, failures counted afresh. */
export function reopenForQa(k: KernelRecord, now: string): KernelRecord {
  if (k.lifecycle === 'done') return k;
  return {
    ...k,
    qa_counted_from: k.qa_runs.length,
    next_obligation: k.next_obligation === 'review' ? 'review' : 'run_qa',
    updated_at: now,
  };
}

export type CheckSpec = AcceptanceCheck;
