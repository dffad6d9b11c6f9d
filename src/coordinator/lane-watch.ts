import { scopeMatcher } from '../core/scope.js';
import { readLaneStatus } from '../git/lane-status.js';
import { changedPaths } from '../git/worktrees.js';
import type { LaneSession } from '../hosts/host.js';
import { StallWatch } from './health.js';

// Lane health at a glance (SPEC §7), for every live lane, before QA runs:
// - waiting: alive, quiet for a debounce, and the screen matches one of the executor
//   profile's prompt patterns (an agent asking permission);
// - stalled: no output and no file change for the stall timeout;
// - scope drift: the lane already changed a path outside its scope.
// Only an exit says "done"; these are hints for the human.

export interface LaneHealth {
  waiting: boolean;
  stalled: boolean;
  drift: string[];
}

/** Quiet time after which a lane's screen is checked for a prompt that waits for the user. */
export const WAITING_DEBOUNCE_MS = 1500;

interface Watched {
  session: LaneSession | null;
  lanePath: string;
  base: string;
  stall: StallWatch;
  health: LaneHealth;
  quietTimer: NodeJS.Timeout | null;
  stopOutput: (() => void) | null;
}

export interface LaneWatchOptions {
  scopeOf(task: string): readonly string[];
  promptPatternsOf(task: string): readonly string[];
  stallTimeoutMs: number;
  onChange(task: string, health: LaneHealth, what: 'waiting' | 'stalled' | 'drift' | 'recovered'): void;
}

export class LaneWatch {
  private readonly lanes = new Map<string, Watched>();

  constructor(private readonly options: LaneWatchOptions) {}

  watch(task: string, session: LaneSession | null, lanePath: string, base: string): void {
    this.forget(task);
    const now = Date.now();
    const w: Watched = {
      session,
      lanePath,
      base,
      stall: new StallWatch(now),
      health: { waiting: false, stalled: false, drift: [] },
      quietTimer: null,
      stopOutput: null,
    };
    this.lanes.set(task, w);
    if (session) w.stopOutput = session.onOutput(() => this.output(task));
  }

  forget(task: string): void {
    const w = this.lanes.get(task);
    if (!w) return;
    if (w.quietTimer) clearTimeout(w.quietTimer);
    w.stopOutput?.();
    this.lanes.delete(task);
  }

  health(task: string): LaneHealth | null {
    return this.lanes.get(task)?.health ?? null;
  }

  private output(task: string): void {
    const w = this.lanes.get(task);
    if (!w) return;
    w.stall.output(Date.now());
    if (w.health.waiting || w.health.stalled) {
      w.health = { ...w.health, waiting: false, stalled: false };
      this.options.onChange(task, w.health, 'recovered');
    }
    if (w.quietTimer) clearTimeout(w.quietTimer);
    w.quietTimer = setTimeout(() => this.checkPrompt(task), WAITING_DEBOUNCE_MS);
    w.quietTimer.unref();
  }

  private checkPrompt(task: string): void {
    const w = this.lanes.get(task);
    if (!w?.session?.running) return;
    const patterns = this.options.promptPatternsOf(task).map((p) => new RegExp(p));
    if (patterns.length === 0) return;
    const screen = w.session.recentLines(12).join('\n');
    if (patterns.some((re) => re.test(screen)) && !w.health.waiting) {
      w.health = { ...w.health, waiting: true };
      this.options.onChange(task, w.health, 'waiting');
    }
  }

  /** Periodic: file fingerprints for the stall watch, and changed paths for scope drift. */
  async check(): Promise<void> {
    const now = Date.now();
    for (const [task, w] of this.lanes) {
      try {
        await this.checkLane(task, w, now);
      } catch {
        // Advisory only, and run from a timer: a lane deleted under it (or git failing on
        // it) must not end the coordinator. The next tick finds a lost lane and parks it.
      }
    }
  }

  private async checkLane(task: string, w: Watched, now: number): Promise<void> {
    // One status gives both the file fingerprint and, while HEAD is the base, the changed paths.
    const status = await readLaneStatus(w.lanePath);
    w.stall.files(status?.entries.join('\0') ?? '', now);
    if (w.stall.check(now, this.options.stallTimeoutMs)) {
      w.health = { ...w.health, stalled: true };
      this.options.onChange(task, w.health, 'stalled');
    }
    const inScope = scopeMatcher(this.options.scopeOf(task));
    const changed =
      status && status.head === w.base && status.paths
        ? status.paths
        : await changedPaths(w.lanePath, w.base);
    const drift = changed.filter((p) => !inScope(p));
    if (drift.join('\0') !== w.health.drift.join('\0')) {
      w.health = { ...w.health, drift };
      if (drift.length) this.options.onChange(task, w.health, 'drift');
    }
  }
}
