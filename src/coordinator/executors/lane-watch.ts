import {
  laneAsksUser,
  laneFiles,
  laneOutput,
  laneScreen,
  newLaneLife,
} from '../../core/rules/lane-health.js';
import type { HealthChange, HealthStep, LaneHealth, LaneLife } from '../../core/rules/lane-health.js';
import type { Clock } from '../../core/ports/clock.js';
import type { WorktreePort } from '../../core/ports/worktree-port.js';
import type { LaneSession } from '../../hosts/host.js';
import { coordinatorThread } from '../../process/thread-share.js';

// Watches every live lane for the health hints of src/core/lane-health.ts (waiting,
// stalled, scope drift): feeds it the lane's output, its screen after a quiet debounce and
// its files now and then, and tells the changes it finds.

export type { LaneHealth };

/** Quiet time after which a lane's screen is checked for a prompt that waits for the user. */
export const WAITING_DEBOUNCE_MS = 1500;

interface Watched {
  session: LaneSession | null;
  lanePath: string;
  base: string;
  life: LaneLife;
  quietTimer: NodeJS.Timeout | null;
  /** Checks a screen that never goes quiet (an agent's animated status line) now and then. */
  busyTimer: NodeJS.Timeout | null;
  stopOutput: (() => void) | null;
}

export interface LaneWatchOptions {
  scopeOf(task: string): readonly string[];
  promptPatternsOf(task: string): readonly string[];
  /**
   * Lanes whose executor redraws while it waits (coding agents animate their screens):
   * their screen is checked during output too, and `waiting` ends only when the prompt is
   * gone from it, not at the next byte of output.
   */
  animated?(task: string): boolean;
  stallTimeoutMs: number;
  /** What every health step is judged against (src/core/lane-health.ts takes `now` as a value). */
  clock: Clock;
  /** Where the lane's files are looked at. */
  worktrees: Pick<WorktreePort, 'lookAtFiles'>;
  onChange(task: string, health: LaneHealth, what: HealthChange): void;
}

export class LaneWatch {
  private readonly lanes = new Map<string, Watched>();

  constructor(private readonly options: LaneWatchOptions) {}

  watch(task: string, session: LaneSession | null, lanePath: string, base: string): void {
    this.forget(task);
    const now = this.options.clock.now().getTime();
    const w: Watched = {
      session,
      lanePath,
      base,
      life: newLaneLife(now),
      quietTimer: null,
      busyTimer: null,
      stopOutput: null,
    };
    this.lanes.set(task, w);
    if (session) w.stopOutput = session.onOutput(() => this.output(task));
  }

  forget(task: string): void {
    const w = this.lanes.get(task);
    if (!w) return;
    if (w.quietTimer) clearTimeout(w.quietTimer);
    if (w.busyTimer) clearTimeout(w.busyTimer);
    w.stopOutput?.();
    this.lanes.delete(task);
  }

  /** The agent itself said it waits for the user (Claude's Notification hook). */
  markWaiting(task: string): void {
    const w = this.lanes.get(task);
    if (w) this.apply(task, w, laneAsksUser(w.life));
  }

  health(task: string): LaneHealth | null {
    return this.lanes.get(task)?.life.health ?? null;
  }

  private apply(task: string, w: Watched, step: HealthStep): void {
    w.life = step.life;
    if (step.change) this.options.onChange(task, w.life.health, step.change);
  }

  private output(task: string): void {
    const w = this.lanes.get(task);
    if (!w) return;
    const animated = this.options.animated?.(task) ?? false;
    this.apply(task, w, laneOutput(w.life, this.options.clock.now().getTime(), animated));
    if (w.quietTimer) clearTimeout(w.quietTimer);
    w.quietTimer = setTimeout(() => this.checkPrompt(task), WAITING_DEBOUNCE_MS);
    w.quietTimer.unref();
    if (animated && !w.busyTimer) {
      w.busyTimer = setTimeout(() => {
        w.busyTimer = null;
        this.checkPrompt(task);
      }, WAITING_DEBOUNCE_MS);
      w.busyTimer.unref();
    }
  }

  private checkPrompt(task: string): void {
    const w = this.lanes.get(task);
    if (!w?.session?.running) return;
    const screen = w.session.recentLines(12).join('\n');
    this.apply(task, w, laneScreen(w.life, screen, this.options.promptPatternsOf(task)));
  }

  /** Periodic: file fingerprints for the stall watch, and changed paths for scope drift. */
  async check(): Promise<void> {
    const now = this.options.clock.now().getTime();
    for (const [task, w] of this.lanes) {
      try {
        await coordinatorThread.turn(); // (a hundred lanes' looks, keys between them)
        await this.checkLane(task, w, now);
      } catch {
        // Advisory only, and run from a timer: a lane deleted under it (or git failing on
        // it) must not end the coordinator. The next tick finds a lost lane and parks it.
      }
    }
  }

  private async checkLane(task: string, w: Watched, now: number): Promise<void> {
    const look = await this.options.worktrees.lookAtFiles(w.lanePath, w.base);
    // (the lane ended, or was watched anew, while git looked: this look is of nothing watched)
    if (this.lanes.get(task) !== w) return;
    const step = laneFiles(w.life, look, this.options.scopeOf(task), now, this.options.stallTimeoutMs);
    w.life = step.life;
    for (const change of step.changes) this.options.onChange(task, w.life.health, change);
  }
}
