// How long the store waits between redraws. A frame of a busy pane is costly (Ink lays out
// and re-tokenises every cell of a 160x48 screen: 15-30 ms on this machine), and it runs on
// the thread that reads the ptys: while it runs, the executors' ptys fill and the executors
// wait. A fixed 20 Hz spent most of that thread on frames nobody can read at that speed, and
// a stream of output took 2-4x as long to reach the screen as in a plain tmux pane
// (docs/PERFORMANCE.md "Pane output in a real terminal"). So the wait after a frame grows
// with what the frame cost: frames take at most 1/FRAME_SHARE_DIVISOR of the thread, never
// less than MIN_INTERVAL_MS apart, and never more than MAX_INTERVAL_MS (the screen stays live).
//
// Once the output on screen has gone quiet, that share no longer protects anything (no
// executor waits on a full pty), and waiting it out only delays the last lines of a stream
// (120-290 ms after a 20 MB cat ended): then the next frame comes QUIET_MS after the last
// output, once the screens have parsed all they hold, and at least QUIET_SHARE_DIVISOR x the
// last frame's cost after it (docs/PERFORMANCE.md "pane, session 12").

/** The fastest redraw rate: 20 Hz, for cheap frames. */
export const MIN_INTERVAL_MS = 50;
/** The slowest: a pane keeps moving at 4 Hz however costly its frames are. */
export const MAX_INTERVAL_MS = 250;
/** A frame costing c ms is followed by at least c × this of other work. */
export const FRAME_SHARE_DIVISOR = 6;
/** Output on screen silent this long has gone quiet (the pty worker sends data every 4 ms). */
export const QUIET_MS = 15;
/** A quiet watch that fires later than this counts again: the thread was busy meanwhile. */
const LATE_MS = 10;
/** After output went quiet, a frame costing c ms is followed by at least c × this. */
export const QUIET_SHARE_DIVISOR = 2;

export class RedrawPace {
  private lastCostMs = 0;

  /** Records what the last frame cost (the listeners' time: Ink renders in it). */
  frameCost(ms: number): void {
    this.lastCostMs = ms;
  }

  /** The wait before the next frame. */
  interval(): number {
    return Math.min(
      MAX_INTERVAL_MS,
      Math.max(MIN_INTERVAL_MS, Math.round(this.lastCostMs * FRAME_SHARE_DIVISOR)),
    );
  }

  /** The wait after the last frame before one that shows output gone quiet. */
  quietInterval(): number {
    return Math.min(this.interval(), Math.round(this.lastCostMs * QUIET_SHARE_DIVISOR));
  }
}

/**
 * The store's redraw timer: `request()` marks the view changed and the frame (`draw`) runs
 * after the pace's wait; `output()` notes output of a pane on screen, and once it has been
 * quiet QUIET_MS and `settle()` (the screens on show parsed all they hold) resolves with no
 * output since, a frame waiting for the pace runs sooner.
 */
export class RedrawSchedule {
  private readonly pace = new RedrawPace();
  private timer: NodeJS.Timeout | null = null;
  private dueAt = 0;
  private dirty = false;
  private lastFrameAt = -Infinity;
  private outputAt = 0;
  private quietTimer: NodeJS.Timeout | null = null;
  private disposed = false;

  constructor(
    private readonly draw: () => void,
    private readonly settle: () => Promise<unknown>,
  ) {}

  request(): void {
    if (this.disposed) return;
    this.dirty = true;
    if (!this.timer) this.arm(this.pace.interval());
  }

  output(): void {
    this.outputAt = performance.now();
    if (!this.quietTimer) this.watchQuiet(QUIET_MS);
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.quietTimer) clearTimeout(this.quietTimer);
    this.timer = this.quietTimer = null;
  }

  private arm(wait: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.dueAt = performance.now() + wait;
    this.timer = setTimeout(() => this.frame(), wait);
  }

  private frame(): void {
    this.timer = null;
    if (!this.dirty) return;
    this.dirty = false;
    const began = performance.now();
    this.draw();
    // React renders in a microtask queued by the listeners; this one runs after it.
    queueMicrotask(() => {
      this.lastFrameAt = performance.now();
      this.pace.frameCost(this.lastFrameAt - began);
    });
  }

  private watchQuiet(wait: number): void {
    const due = performance.now() + wait;
    this.quietTimer = setTimeout(() => {
      this.quietTimer = null;
      const since = performance.now() - this.outputAt;
      if (since < QUIET_MS) return this.watchQuiet(QUIET_MS - since);
      // Late: the thread was busy (a frame), and output may be waiting that it has not seen.
      if (performance.now() - due > LATE_MS) return this.watchQuiet(QUIET_MS);
      const at = this.outputAt;
      void this.settle().then(() => {
        // More output meanwhile (the stream only paused): the pace stands.
        if (this.outputAt !== at || !this.timer || this.disposed) return;
        const wait = Math.max(0, this.lastFrameAt + this.pace.quietInterval() - performance.now());
        if (performance.now() + wait < this.dueAt) this.arm(wait);
      });
    }, wait);
  }
}
