// The steward's work off the coordinator's loop (DESIGN §7): creating, moving and removing
// lane worktrees runs here, one job at a time (git's worktree bookkeeping is not safe for
// concurrent adds and removes), while the loop goes on ticking for the lanes that exited.
// A job's result reaches the next tick through the coordinator's inputs; `busy` keeps the
// loop from ending while a job is still out.

export class LaneJobs {
  private readonly queued: { key: string; run: () => Promise<void> }[] = [];
  /** Keys of jobs queued or running: a handoff the tick repeats is not queued twice. */
  private readonly keys = new Set<string>();
  private running = false;
  private idleWaiters: (() => void)[] = [];

  /**
   * `onIdle`: the queue has run dry. The loop waits for a job only to end (`busy`), so it
   * must hear when the last one is over, whatever that job did or left.
   */
  constructor(
    private readonly onError: (key: string, error: unknown) => void,
    private readonly onIdle: () => void = () => {},
  ) {}

  has(key: string): boolean {
    return this.keys.has(key);
  }

  /** The rest of each key queued or running that starts with `prefix`. */
  keysWith(prefix: string): string[] {
    return [...this.keys].filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length));
  }

  get busy(): boolean {
    return this.keys.size > 0;
  }

  /** Queues `run` under `key` unless a job with that key is still out; true when queued. */
  push(key: string, run: () => Promise<void>): boolean {
    if (this.keys.has(key)) return false;
    this.keys.add(key);
    this.queued.push({ key, run });
    if (!this.running) void this.drain();
    return true;
  }

  /** Resolves once nothing is queued or running. */
  idle(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private async drain(): Promise<void> {
    this.running = true;
    for (let job = this.queued.shift(); job; job = this.queued.shift()) {
      try {
        await job.run();
      } catch (error) {
        this.onError(job.key, error);
      } finally {
        this.keys.delete(job.key);
      }
    }
    this.running = false;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
    this.onIdle();
  }
}
