import type { ExitInfo, LaneSession } from '../../hosts/host.js';
import type { LaneHealth } from './lane-watch.js';

// What the executors know of each child whose executor runs (ExecutorRunner.live), and
// what they tell the loop.

export interface RunnerEvents {
  launched(task: string, attempt: number, session: LaneSession): void;
  exited(task: string, exit: ExitInfo): void;
  paused(why: string): void;
  health(task: string, health: LaneHealth, what: string): void;
  /** An exit is queued: the loop should tick. */
  wake(): void;
}

export interface Live {
  /** Null while `launching`, and for an executor from before a restart (watched by pid). */
  session: LaneSession | null;
  runId: string;
  startedAt: number;
  /** Set while the executor is being started (ensure): resolves once `session` is set, or it failed. */
  launching?: Promise<void>;
  /** lanes is closing the session (its work is integrated): its end is no executor exit. */
  closing?: boolean;
}
