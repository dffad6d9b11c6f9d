import { describe, expect, it } from 'vitest';
import {
  DISPATCH_UNHEALTHY,
  judgeExecutorEnd,
  SUSPECT_WINDOW_MS,
} from '../../src/core/rules/dispatch-health.js';

// When dispatch pauses, as the core decides it: plain values in and out, no git, no
// processes, no timers.

describe('when dispatch pauses', () => {
  const quick = { ranForMs: 5_000, laneChanged: false, watchedFromStart: true };

  it('counts quick exits that changed nothing; the second in a row pauses, with the reason', () => {
    const first = judgeExecutorEnd(0, quick, false);
    expect(first).toEqual({ suspect: true, suspectStreak: 1, pause: null });
    expect(judgeExecutorEnd(first.suspectStreak, quick, false)).toEqual({
      suspect: true,
      suspectStreak: 2,
      pause: DISPATCH_UNHEALTHY,
    });
  });

  it('does not pause again when dispatch is paused already', () => {
    expect(judgeExecutorEnd(1, quick, true)).toEqual({ suspect: true, suspectStreak: 2, pause: null });
  });

  it('resets the count on an exit that changed files, or that ran a minute or more', () => {
    expect(judgeExecutorEnd(1, { ...quick, laneChanged: true }, false)).toEqual({
      suspect: false,
      suspectStreak: 0,
      pause: null,
    });
    expect(judgeExecutorEnd(1, { ...quick, ranForMs: SUSPECT_WINDOW_MS }, false).suspectStreak).toBe(0);
    expect(judgeExecutorEnd(1, { ...quick, ranForMs: SUSPECT_WINDOW_MS - 1 }, false).suspect).toBe(true);
  });

  it('leaves the count alone for an executor found again after a restart, or stopped by lanes', () => {
    const untouched = { suspect: false, suspectStreak: 1, pause: null };
    expect(judgeExecutorEnd(1, { ...quick, watchedFromStart: false }, false)).toEqual(untouched);
    expect(judgeExecutorEnd(1, { ...quick, stoppedByLanes: true }, false)).toEqual(untouched);
  });
});
