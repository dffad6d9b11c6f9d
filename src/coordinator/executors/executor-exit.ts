import type { ChildRecord } from '../../core/records/record.js';
import { judgeExecutorEnd } from '../../core/rules/dispatch-health.js';
import type { Clock } from '../../core/ports/clock.js';
import type { CoordinatorStorePort } from '../../core/ports/store-port.js';
import type { WorktreePort } from '../../core/ports/worktree-port.js';
import type { ExitInfo } from '../../hosts/host.js';
import type { ExitQueue } from './exit-queue.js';
import { coordinatorThread } from '../../process/thread-share.js';

// An executor's end as the coordinator sees it: judged for dispatch health (two suspect
// exits in a row pause dispatch, core/rules/dispatch-health.ts), ended beside the loop
// when the tick does not have it in hand (its QA and delivery commit at once, DESIGN §7),
// and queued as an exit event for the next tick.

export interface ExitDeps {
  store: CoordinatorStorePort;
  clock: Clock;
  worktrees: WorktreePort;
  queue: ExitQueue;
  /** Ends an exited attempt beside the loop (RunnerOptions.endAttempt). */
  endAttempt: (child: ChildRecord, exit: ExitInfo & { host: string }) => Promise<boolean>;
  paused(): boolean;
  pause(why: string): void;
  exited(task: string, exit: ExitInfo): void;
  /** The exit is queued: the loop should tick. */
  wake(): void;
}

export interface EndedExecutor {
  task: string;
  /** Since when lanes has watched it (a restart's orphan: since the restart). */
  startedAt: number;
  watchedFromStart: boolean;
  host: string;
  stoppedByLanes: boolean;
  exit: ExitInfo;
}

export class ExecutorExits {
  /** Suspect exits in a row (core/rules/dispatch-health.ts). */
  private suspectStreak = 0;

  constructor(private readonly deps: ExitDeps) {}

  /** Dispatch resumed: the streak starts again. */
  resumed(): void {
    this.suspectStreak = 0;
  }

  /** Judges the end, ends it beside the loop where it can, and queues it for the tick. */
  async ended(e: EndedExecutor, forget: () => void): Promise<void> {
    const { deps } = this;
    // (each piece in its turn of the coordinator's thread: a hundred exits at once leave
    // room for keys and frames between their pieces, process/thread-share.ts)
    await coordinatorThread.turn();
    const ranFor = deps.clock.now().getTime() - e.startedAt;
    const child = deps.store.readRecord().children.find((c) => c.task_id === e.task);
    const lane = child?.lane;
    // (not read for an executor lanes stopped: its lane is going, and the tick has its exit;
    // unknown, as if changed, when the lane's machine does not answer now: the exit still
    // goes to the tick, whose QA reads the lane once the machine is back)
    const atExit =
      lane && !e.stoppedByLanes
        ? await deps.worktrees.changedAtExit(lane.path, lane.base_head).catch(() => null)
        : null;
    await coordinatorThread.turn();
    const changed = atExit === null || atExit.length > 0;
    // (an executor from before a restart ran for longer than lanes has seen: not a quick exit)
    const end = {
      ranForMs: ranFor,
      laneChanged: changed,
      watchedFromStart: e.watchedFromStart,
      stoppedByLanes: e.stoppedByLanes,
    };
    const judged = judgeExecutorEnd(this.suspectStreak, end, deps.paused());
    this.suspectStreak = judged.suspectStreak;
    if (judged.suspect)
      deps.store.journal('suspect-dispatch', { task: e.task, ran_ms: ranFor, code: e.exit.code });
    if (judged.pause) deps.pause(judged.pause);
    deps.exited(e.task, e.exit); // (the screen shows it ended while its QA runs)
    // Left to the tick: an executor lanes stopped (a drop, a cancel: its lane is going), and
    // a child whose turn end the tick has in hand or waiting (both would run QA in the lane).
    const tickHasIt = deps.queue.tickHas(e.task);
    const ending =
      e.stoppedByLanes || tickHasIt || !child
        ? undefined
        : deps.endAttempt(child, { ...e.exit, host: e.host });
    // A failure there leaves the exit to the tick, which does the same work again (and
    // meets the same error, if it lasts, where every tick error goes).
    const recorded = ending ? await deps.queue.endBeside(e.task, ending) : false;
    await coordinatorThread.turn();
    // (live until here: no executor handoff starts this lane again while its exit is ended)
    forget();
    deps.queue.push({ task_id: e.task, code: e.exit.code, signal: e.exit.signal, host: e.host, recorded });
    deps.wake();
  }
}
