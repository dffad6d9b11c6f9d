import { describe, expect, it } from 'vitest';
import { checkHookMessage, parseHookMessage, tokenDigest } from '../../src/core/turns/hook-message.js';
import type { HookMessage, LaneFacts } from '../../src/core/turns/hook-message.js';
import {
  applyQa,
  kernelRecordSchema,
  newKernelRecord,
  recordExit,
  startAttempt,
} from '../../src/core/records/kernel.js';
import type { KernelRecord } from '../../src/core/records/kernel.js';
import { applyReview } from '../../src/core/records/kernel.js';
import {
  reworkKey,
  reworkToType,
  recordSessionClosed,
  recordSessionId,
  recordTurnEnd,
  resumeInstruction,
  sessionShouldClose,
  sessionToResume,
  turnVerdict,
} from '../../src/core/turns/turn.js';

// The pure rules of an agent's turn (src/core/turn.ts) and of hook messages
// (src/core/hook-message.ts): no git, no process, no file.

const NOW = '2026-01-01T00:00:00.000Z';
const TOKEN = 'a'.repeat(48);

function kernel(): KernelRecord {
  return newKernelRecord({
    batchId: 'b',
    taskId: 'a',
    runId: 'run-1',
    lanePath: '/lanes/a',
    baseHead: '0'.repeat(40),
    reviewRequired: false,
    now: NOW,
  });
}

function running(sessionId: string | null = 'sess-1', token = TOKEN): KernelRecord {
  return startAttempt(
    kernel(),
    {
      host: 'pty',
      paneId: null,
      pid: 1,
      pidStart: null,
      statusPath: null,
      sessionId,
      hookTokenSha256: tokenDigest(token),
    },
    NOW,
  );
}

const failingCheck = {
  id: 'right',
  exit_code: 1,
  timed_out: false,
  duration_ms: 1,
  log_path: null,
  tail: 'expected right',
};
const passingCheck = { ...failingCheck, exit_code: 0, tail: '' };
const qa = (k: KernelRecord, pass: boolean) =>
  applyQa(
    k,
    { scope: ['**'], changedPaths: ['src/a.txt'], checks: [pass ? passingCheck : failingCheck] },
    NOW,
  );

describe('the kernel attempt of an agent', () => {
  it('reads records written before the agent fields existed', () => {
    const old = JSON.parse(JSON.stringify(running())) as { attempts: Record<string, unknown>[] };
    for (const field of ['session_id', 'resumed', 'hook_token_sha256', 'turns', 'closed_by'])
      delete old.attempts[0]![field];
    const read = kernelRecordSchema.parse(old);
    expect(read.attempts[0]).toMatchObject({
      session_id: null,
      resumed: false,
      hook_token_sha256: null,
      turns: 0,
      closed_by: null,
    });
  });

  it('a turn end keeps the attempt open and makes QA due', () => {
    const k = recordTurnEnd(running(), NOW);
    expect(k.next_obligation).toBe('run_qa');
    expect(k.attempts[0]).toMatchObject({ ended_at: null, turns: 1 });
  });

  it('a turn end without a running attempt, or after the work is done, moves nothing', () => {
    expect(recordTurnEnd(kernel(), NOW)).toEqual(kernel());
    const done = qa(recordTurnEnd(running(), NOW), true);
    expect(recordTurnEnd(done, NOW)).toBe(done);
  });

  it('records a session id the agent names later, once', () => {
    const k = recordSessionId(running(null), 1, 'thread-9', NOW);
    expect(k.attempts[0]!.session_id).toBe('thread-9');
    expect(recordSessionId(k, 1, 'thread-9', NOW)).toBe(k);
  });

  it('records how a finished session was closed', () => {
    const k = recordSessionClosed(running(), 1, 'SIGTERM', { code: null, signal: 'SIGTERM' }, NOW);
    expect(k.attempts[0]).toMatchObject({ closed_by: 'SIGTERM', ended_at: NOW, signal: 'SIGTERM' });
  });

  it('a relaunch continues the newest session the agent had', () => {
    expect(sessionToResume(kernel())).toBeNull();
    const lost = recordExit(running('sess-1'), { code: null, signal: 'lost' }, NOW);
    expect(sessionToResume(lost)).toBe('sess-1');
    const again = startAttempt(
      lost,
      { host: 'pty', paneId: null, pid: 2, pidStart: null, statusPath: null, sessionId: null },
      NOW,
    );
    expect(sessionToResume(again)).toBe('sess-1');
  });

  it('tells a relaunched agent the rework if there is one, else to go on', () => {
    expect(resumeInstruction(kernel())).toMatch(/lanes restarted/);
    const failed = qa(recordTurnEnd(running(), NOW), false);
    expect(resumeInstruction(failed)).toContain('expected right');
  });
});

describe('the verdict at the end of a turn', () => {
  const ended = recordTurnEnd(running(), NOW);

  it('waits until QA has run', () => {
    expect(turnVerdict({ kernel: ended, childState: 'enrolled', qaRunsAtTurnEnd: 0 })).toEqual({
      kind: 'pending',
    });
  });

  it('a failed QA run: continue in the same session with the failing output', () => {
    const v = turnVerdict({ kernel: qa(ended, false), childState: 'enrolled', qaRunsAtTurnEnd: 0 });
    expect(v.kind).toBe('continue');
    expect(v.kind === 'continue' && v.feedback).toContain('Check right exited 1');
    expect(v.kind === 'continue' && v.feedback).toContain('expected right');
  });

  it('a pass lets the agent stop', () => {
    expect(turnVerdict({ kernel: qa(ended, true), childState: 'settled', qaRunsAtTurnEnd: 0 })).toEqual({
      kind: 'stop',
      why: 'passed',
    });
  });

  it('at the QA failure limit the child parks: the agent stops and its session stays for the human', () => {
    expect(turnVerdict({ kernel: qa(ended, false), childState: 'needs_human', qaRunsAtTurnEnd: 0 })).toEqual({
      kind: 'stop',
      why: 'parked',
    });
    expect(sessionShouldClose('needs_human')).toBe(false);
  });

  it('a lane waiting for review stops; a lane no longer enrolled stops', () => {
    const review = { ...qa(ended, true), lifecycle: 'active' as const, next_obligation: 'review' as const };
    expect(turnVerdict({ kernel: review, childState: 'enrolled', qaRunsAtTurnEnd: 0 })).toEqual({
      kind: 'stop',
      why: 'review',
    });
    expect(turnVerdict({ kernel: ended, childState: 'pending', qaRunsAtTurnEnd: 0 })).toEqual({
      kind: 'stop',
      why: 'not-running',
    });
  });

  it('sessions close once the work is integrated', () => {
    expect(sessionShouldClose('integrated')).toBe(true);
    expect(sessionShouldClose('released')).toBe(true);
    expect(sessionShouldClose('settled')).toBe(false);
    expect(sessionShouldClose('enrolled')).toBe(false);
  });
});

describe('a rework for an agent waiting at its prompt', () => {
  const passedForReview = () => {
    const k = qa(recordTurnEnd(running(), NOW), true);
    return { ...k, lifecycle: 'active' as const, next_obligation: 'review' as const };
  };

  it('a review rejection is typed once, with the reviewer note', () => {
    const waiting = passedForReview();
    const sent = reworkKey(waiting);
    expect(reworkToType(waiting, 'enrolled', sent)).toBeNull();
    const rejected = applyReview(waiting, 'rejected', 'name the file better', '2026-01-01T00:01:00.000Z');
    const text = reworkToType(rejected, 'enrolled', sent);
    expect(text).toContain('The reviewer rejected the change.\nname the file better');
    expect(reworkToType(rejected, 'enrolled', reworkKey(rejected))).toBeNull();
  });

  it('nothing for a lane that is not enrolled or has no running attempt', () => {
    const rejected = applyReview(passedForReview(), 'rejected', null, '2026-01-01T00:01:00.000Z');
    expect(reworkToType(rejected, 'needs_human', '')).toBeNull();
    const ended = recordExit(rejected, { code: 0, signal: null }, NOW);
    expect(reworkToType(ended, 'enrolled', '')).toBeNull();
  });
});

describe('hook messages', () => {
  const message = (patch: Partial<HookMessage> = {}): HookMessage => ({
    v: 1,
    kind: 'turn-end',
    agent: 'claude',
    task: 'a',
    run_id: 'run-1',
    attempt: 1,
    token: TOKEN,
    cwd: '/repo.lanes/b/a/src',
    session_id: 'sess-1',
    last_message: 'The task is done.',
    ...patch,
  });
  const otherToken = 'b'.repeat(48);
  const lanes = new Map<string, LaneFacts>([
    ['a', { runId: 'run-1', kernel: running('sess-1', TOKEN), path: '/repo.lanes/b/a', running: true }],
    [
      'b',
      {
        runId: 'run-2',
        kernel: { ...running('sess-2', otherToken), task_id: 'b', run_id: 'run-2' },
        path: '/repo.lanes/b/b',
        running: true,
      },
    ],
    ['c', { runId: null, kernel: null, path: null, running: false }],
  ]);

  it('accepts the current attempt of its own lane', () => {
    expect(checkHookMessage(message(), lanes)).toEqual({ ok: true });
  });

  it.each([
    ['another lane (its token names lane b)', message({ token: otherToken }), 'other-lane'],
    ['a message for lane c with the token of lane a', message({ task: 'c' }), 'other-lane'],
    ['a lane that runs nothing', message({ task: 'c', token: 'd'.repeat(48) }), 'unknown-lane'],
    ['a lane not in the batch', message({ task: 'zz', token: 'd'.repeat(48) }), 'unknown-lane'],
    ['a stale run', message({ run_id: 'run-0' }), 'stale-run'],
    ['a stale attempt', message({ attempt: 2 }), 'stale-attempt'],
    ['a bad token', message({ token: 'c'.repeat(48) }), 'bad-token'],
    ["the right token sent from another lane's folder", message({ cwd: '/repo.lanes/b/b' }), 'outside-lane'],
    [
      'the right token sent from a sibling folder of the lane',
      message({ cwd: '/repo.lanes/b/ab' }),
      'outside-lane',
    ],
  ])('refuses %s', (_what, m, reason) => {
    expect(checkHookMessage(m, lanes)).toEqual({ ok: false, reason });
  });

  it('refuses an attempt that already ended', () => {
    const ended = new Map(lanes);
    ended.set('a', {
      runId: 'run-1',
      kernel: recordExit(running(), { code: 0, signal: null }, NOW),
      path: '/repo.lanes/b/a',
      running: false,
    });
    expect(checkHookMessage(message(), ended)).toEqual({ ok: false, reason: 'stale-attempt' });
  });

  it("refuses a turn end while the lane's executor does not run (a session start may come first)", () => {
    const gone = new Map(lanes);
    gone.set('a', { ...lanes.get('a')!, running: false });
    expect(checkHookMessage(message(), gone)).toEqual({ ok: false, reason: 'not-running' });
    expect(checkHookMessage(message({ kind: 'session' }), gone)).toEqual({ ok: true });
  });

  it.each([
    ['not JSON', '{"v":1', /not valid JSON/],
    ['another protocol', JSON.stringify({ ...message(), v: 2 }), /invalid: v/],
    ['an unknown field', JSON.stringify({ ...message(), extra: 1 }), /invalid/],
    ['a short token', JSON.stringify({ ...message(), token: 'x' }), /invalid: token/],
    ['a bad task id', JSON.stringify({ ...message(), task: '../a' }), /invalid: task/],
  ])('parsing refuses %s with a clear message', (_what, line, problem) => {
    const parsed = parseHookMessage(line);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.problem).toMatch(problem);
  });
});
