// How long the store waits between redraws. A frame of a busy pane is costly (Ink lays out
// and re-tokenises every cell of a 160x48 screen: 15-30 ms on this machine), and it runs on
// the thread that reads the ptys: while it runs, the executors' ptys fill and the executors
// wait. A fixed 20 Hz spent most of that thread on frames nobody can read at that speed, and
// a stream of output took 2-4x as long to reach the screen as in a plain tmux pane
// (docs/PERFORMANCE.md "Pane output in a real terminal"). So the wait after a frame grows
// with what the frame cost: frames take at most 1/FRAME_SHARE_DIVISOR of the thread, never
// less than MIN_INTERVAL_MS apart, and never more than MAX_INTERVAL_MS (the screen stays live).

/** The fastest redraw rate: 20 Hz, for cheap frames. */
export const MIN_INTERVAL_MS = 50;
/** The slowest: a pane keeps moving at 4 Hz however costly its frames are. */
export const MAX_INTERVAL_MS = 250;
/** A frame costing c ms is followed by at least c × this of other work. */
export const FRAME_SHARE_DIVISOR = 6;

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
}
