import { describe, expect, it } from 'vitest';
import { LanesError } from '../../src/core/basics/errors.js';
import type { Clock } from '../../src/core/ports/clock.js';
import type { CoordinatorStorePort } from '../../src/core/ports/store-port.js';
import type { WorktreePort } from '../../src/core/ports/worktree-port.js';
import type { BatchRecord } from '../../src/core/records/record.js';
import { ExecutorExits } from '../../src/coordinator/executors/executor-exit.js';
import { ExitQueue } from '../../src/coordinator/executors/exit-queue.js';

// An executor ends on a machine that stops answering just then: the read of what it changed
// (wt.changedAtExit, over ssh) throws machine_unreachable. Its exit must still reach the
// tick (else the child stays running for good), not judged a quick exit that changed
// nothing (that would count towards pausing dispatch).

const BASE = 'a'.repeat(40);
const child = { task_id: 't1', state: 'running', lane: { path: '/m1/lane', base_head: BASE } };
const record = { children: [child] } as unknown as BatchRecord;
const journal: string[] = [];
const store = {
  readRecord: () => record,
  journal: (event: string) => journal.push(event),
} as unknown as CoordinatorStorePort;
const clock = { now: () => new Date(1_000_000) } as Clock;

describe('an executor exit on a machine that stops answering', () => {
  it('is queued for the tick, and not judged a suspect exit', async () => {
    const queue = new ExitQueue();
    let woken = 0;
    const worktrees = {
      changedAtExit: () =>
        Promise.reject(new LanesError('machine_unreachable', 'machine m1 does not answer', 1)),
    } as unknown as WorktreePort;
    const exits = new ExecutorExits({
      store,
      clock,
      worktrees,
      queue,
      endAttempt: async () => false,
      paused: () => false,
      pause: () => {},
      exited: () => {},
      wake: () => woken++,
    });
    let forgotten = false;
    for (let i = 0; i < 2; i++)
      await exits.ended(
        {
          task: 't1',
          startedAt: 1_000_000, // (a quick exit: what would be suspect had it changed nothing)
          watchedFromStart: true,
          host: 'machine',
          stoppedByLanes: false,
          exit: { code: 0, signal: null },
        },
        () => (forgotten = true),
      );
    expect(queue.take().exited.map((e) => e.task_id)).toEqual(['t1', 't1']);
    expect(forgotten).toBe(true);
    expect(woken).toBe(2);
    expect(journal).not.toContain('suspect-dispatch');
  });
});
