// When dispatch pauses (DESIGN §7): an executor that exits within a minute without
// changing anything in its lane is suspect (an agent stopped by a quota or an auth wall
// does exactly that); two suspect exits in a row, across lanes, pause dispatch until a
// human resumes it. Any other exit resets the count; one that says nothing of dispatch
// (found again after a restart, or stopped by lanes) leaves it alone.

export const SUSPECT_WINDOW_MS = 60_000;
export const SUSPECT_LIMIT = 2;
export const DISPATCH_UNHEALTHY =
  'dispatch-unhealthy: two executors in a row exited quickly without changing anything';

export interface ExecutorEnd {
  ranForMs: number;
  laneChanged: boolean;
  /**
   * Watched from its start. An executor found again after a restart ran for longer than
   * this process has seen, so its exit says nothing about dispatch.
   */
  watchedFromStart: boolean;
  /** lanes stopped it on purpose (drop, cancel): its exit says nothing about dispatch. */
  stoppedByLanes?: boolean;
}

export interface DispatchJudgement {
  suspect: boolean;
  /** The count of suspect exits in a row, after this one. */
  suspectStreak: number;
  /** Set when this exit pauses dispatch (not when it is paused already): the reason. */
  pause: string | null;
}

export function judgeExecutorEnd(
  suspectStreak: number,
  end: ExecutorEnd,
  paused: boolean,
): DispatchJudgement {
  if (!end.watchedFromStart || end.stoppedByLanes) return { suspect: false, suspectStreak, pause: null };
  const suspect = end.ranForMs < SUSPECT_WINDOW_MS && !end.laneChanged;
  const streak = suspect ? suspectStreak + 1 : 0;
  return {
    suspect,
    suspectStreak: streak,
    pause: streak >= SUSPECT_LIMIT && !paused ? DISPATCH_UNHEALTHY : null,
  };
}
