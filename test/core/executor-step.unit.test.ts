import { describe, expect, it } from 'vitest';
import { nextExecutorStep } from '../../src/core/rules/executor-step.js';
import type { ExecutorFacts } from '../../src/core/rules/executor-step.js';
import { abandonAttempt, newKernelRecord, recordExit, startAttempt } from '../../src/core/records/kernel.js';
import type { AttemptStart, KernelRecord } from '../../src/core/records/kernel.js';

// What the executor runner does with an executor handoff, as the core decides it: plain
// kernel records in, a step out; no host, no files, no processes.

const NOW = '2026-12-01T09:00:00.000Z';
const fresh = newKernelRecord({
  batchId: 'b1',
  taskId: 'T1',
  runId: 'run-1',
  lanePath: '/lanes/T1',
  baseHead: 'c'.repeat(40),
  reviewRequired: false,
  now: NOW,
});
const START = { host: 'pty', paneId: null, pid: 42, pidStart: '7', statusPath: '/s' } as AttemptStart;
const running: KernelRecord = startAttempt(fresh, START, NOW);

const facts = (over: Partial<ExecutorFacts> = {}): ExecutorFacts => ({
  handoff: { run_id: 'run-1', next_obligation: 'implement' },
  liveRunId: null,
  exitQueued: false,
  kernel: fresh,
  paused: false,
  inPlan: true,
  ...over,
});

describe('nextExecutorStep', () => {
  it('starts an executor for a child with work to do', () => {
    expect(nextExecutorStep(facts())).toEqual({ kind: 'start' });
  });

  it('does nothing while its executor runs here, or while its exit waits for the next tick', () => {
    expect(nextExecutorStep(facts({ liveRunId: 'run-1' }))).toEqual({ kind: 'none', why: 'running' });
    expect(nextExecutorStep(facts({ exitQueued: true }))).toEqual({ kind: 'none', why: 'exit-queued' });
  });

  it('a session of an older run of the child is no reason to wait', () => {
    expect(nextExecutorStep(facts({ liveRunId: 'run-0' }))).toEqual({ kind: 'start' });
  });

  it('looks for the executor of an open attempt first, never starting a second one', () => {
    const step = nextExecutorStep(facts({ kernel: running, paused: true }));
    expect(step).toEqual({ kind: 'find-again', attempt: running.attempts[0] });
  });

  it('after a lost attempt is abandoned, starts the next one', () => {
    const abandoned = abandonAttempt(running, NOW);
    expect(nextExecutorStep(facts({ kernel: abandoned }))).toEqual({ kind: 'start' });
  });

  it('does nothing without a kernel record, without work, while paused, or for a child not in the plan', () => {
    expect(nextExecutorStep(facts({ kernel: null }))).toEqual({ kind: 'none', why: 'no-kernel' });
    const exited = recordExit(running, { code: 0, signal: null }, NOW);
    expect(
      nextExecutorStep(facts({ kernel: exited, handoff: { run_id: 'run-1', next_obligation: 'run_qa' } })),
    ).toEqual({
      kind: 'none',
      why: 'no-work',
    });
    expect(nextExecutorStep(facts({ paused: true }))).toEqual({ kind: 'none', why: 'paused' });
    expect(nextExecutorStep(facts({ inPlan: false }))).toEqual({ kind: 'none', why: 'not-in-plan' });
  });
});
