import { describe, expect, it } from 'vitest';
import { ExitQueue } from '../../src/coordinator/executors/exit-queue.js';

// The exits and turn ends on their way to the tick: a turn end is an event of its own
// (TickInput.turnEnds), never an exit with no code.

describe('the exit queue', () => {
  it('hands exits and turn ends to the tick apart, and counts both as the tick’s until it is done', () => {
    const q = new ExitQueue();
    q.push({ task_id: 'A', code: 0, signal: null, host: 'pty' });
    q.pushTurnEnd({ task_id: 'B', attempt: 2, session_id: 's-B' });
    expect(q.size).toBe(2);
    expect(q.queued('B')).toBe(true); // (no executor handoff starts B again meanwhile)
    const taken = q.take();
    expect(taken).toEqual({
      exited: [{ task_id: 'A', code: 0, signal: null, host: 'pty' }],
      turnEnds: [{ task_id: 'B', attempt: 2, session_id: 's-B' }],
    });
    expect(q.size).toBe(0);
    expect(q.tickHas('B')).toBe(true); // (an exit of B now is left to the tick: it runs B's QA)
    q.tickDone();
    expect(q.tickHas('B')).toBe(false);
  });

  it('names as ending the exits ended beside the loop and not handed in yet', async () => {
    const q = new ExitQueue();
    let finish!: (v: boolean) => void;
    const ending = q.endBeside('A', new Promise<boolean>((resolve) => (finish = resolve)));
    expect(q.endingTasks()).toEqual(['A']);
    finish(true);
    expect(await ending).toBe(true);
    q.push({ task_id: 'A', code: 0, signal: null, recorded: true });
    q.pushTurnEnd({ task_id: 'B', attempt: 1 });
    expect(q.endingTasks()).toEqual(['A']);
  });
});
