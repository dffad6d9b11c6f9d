// The coordinator's thread is the TUI's too: a key is read, and its frame drawn, only
// between two pieces of the coordinator's work. When a hundred lanes end together, the
// pieces of their ends (each a few milliseconds of reading records, copying an index,
// writing a kernel record) came back to back, in one turn of the event loop, and a key
// waited behind all of them (many_lanes, docs/PERFORMANCE.md "Many lanes"). A piece that
// awaits its turn here runs at once while this turn's share is not used up, else in a
// later turn of the event loop, after what waits there (keys, frames, I/O).
//
// Only when it runs is decided here, never what it does: the pieces keep their order.

/** How long the pieces may run in one turn of the event loop before they give way. */
export const SHARE_MS = 8;

export class ThreadShare {
  private readonly waiting: (() => void)[] = [];
  private scheduled = false;
  /** When this turn's share began (performance.now), or null when none has run yet. */
  private began: number | null = null;

  constructor(
    private readonly shareMs: number = SHARE_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Resolves when the caller's next piece of work may run. */
  turn(): Promise<void> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.schedule();
    });
  }

  /** Pieces waiting for a turn (tests). */
  get pending(): number {
    return this.waiting.length;
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // (a setImmediate queued from inside one runs in the next turn of the loop: timers and
    // I/O, a key among them, come in between)
    setImmediate(() => {
      this.scheduled = false;
      this.began = this.now();
      this.next();
    });
  }

  /**
   * Lets the next piece run; once it has given way (its next await), this runs again from a
   * microtask queued after it, and lets the one after run while the share lasts.
   */
  private next(): void {
    if (this.waiting.length === 0) return;
    if (this.began === null || this.now() - this.began >= this.shareMs) {
      this.began = null;
      this.schedule();
      return;
    }
    this.waiting.shift()!();
    queueMicrotask(() => this.next());
  }
}

/** The coordinator's thread (one a process). */
export const coordinatorThread = new ThreadShare();

/**
 * `work`'s outcome, resolved or rejected in a turn of `share`: what runs on after the answer
 * (in the caller, after its await) runs in that turn, not in the turn of the event loop in
 * which the answer came back together with many others.
 */
export function afterTurn<T>(work: Promise<T>, share: ThreadShare = coordinatorThread): Promise<T> {
  return work.then(
    (result) => share.turn().then(() => result),
    (error: unknown) =>
      share.turn().then(() => {
        throw error;
      }),
  );
}
