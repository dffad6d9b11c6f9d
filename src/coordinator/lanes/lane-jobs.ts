// The steward's work off the coordinator's loop (DESIGN §7): creating, moving and removing
// lane worktrees runs here while the loop goes on ticking for the lanes that exited. A
// child's jobs run one at a time, in the order queued (a lane made, then removed, then made
// again); different children's jobs run side by side, and only their `git worktree`
// commands wait for each other (src/git/git.ts `isWorktreeBookkeeping`). A job's result
// reaches the next tick through the coordinator's inputs; `busy` keeps the loop from
// ending while a job is still out.

type Job = { key: string; run: () => Promise<void> };

export class LaneJobs {
  /** Each child's jobs not yet done, the running one first: `<kind>:<child>` keys. */
  private readonly byChild = new Map<string, Job[]>();
  /** Keys of jobs queued or running: a handoff the tick repeats is not queued twice. */
  private readonly keys = new Set<string>();
  private idleWaiters: (() => void)[] = [];
  private readonly childWaiters = new Map<string, (() => void)[]>();

  /**
   * `onIdle`: every job is over. The loop waits for a job only to end (`busy`), so it must
   * hear when the last one is over, whatever that job did or left.
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
    const child = key.slice(key.indexOf(':') + 1);
    const line = this.byChild.get(child);
    if (line) line.push({ key, run });
    else {
      this.byChild.set(child, [{ key, run }]);
      void this.drain(child);
    }
    return true;
  }

  /** Resolves once nothing is queued or running. */
  idle(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Resolves once none of `child`'s jobs is queued or running. */
  doneWith(child: string): Promise<void> {
    if (!this.byChild.has(child)) return Promise.resolve();
    return new Promise((resolve) =>
      this.childWaiters.set(child, [...(this.childWaiters.get(child) ?? []), resolve]),
    );
  }

  private async drain(child: string): Promise<void> {
    const line = this.byChild.get(child) ?? [];
    for (let job = line[0]; job; job = line[0]) {
      try {
        await job.run();
      } catch (error) {
        this.onError(job.key, error);
      } finally {
        line.shift();
        this.keys.delete(job.key);
      }
    }
    this.byChild.delete(child);
    for (const resolve of this.childWaiters.get(child) ?? []) resolve();
    this.childWaiters.delete(child);
    if (this.busy) return;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
    this.onIdle();
  }
}
