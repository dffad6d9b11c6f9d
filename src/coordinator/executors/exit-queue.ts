import type { ExitNotice } from '../../core/tick/tick.js';

// The executor exits on their way to the tick (DESIGN §7): those queued for the next tick,
// those the tick in progress was handed, and those being ended beside the loop (their QA
// and delivery commit running, core/attempt-end.ts), which the tick leaves as running.

export class ExitQueue {
  /** Exits and turn ends for the next tick. */
  readonly exits: ExitNotice[] = [];
  /** Exits being ended beside the loop, by child. */
  private readonly ending = new Map<string, Promise<boolean>>();
  /** Children whose exit or turn end the tick in progress was handed (take). */
  private inTick = new Set<string>();

  push(notice: ExitNotice): void {
    this.exits.push(notice);
  }

  /** The child's exit is queued for the next tick. */
  queued(task: string): boolean {
    return this.exits.some((e) => e.task_id === task);
  }

  /** The tick in progress has the child's exit, or the next one will. */
  tickHas(task: string): boolean {
    return this.inTick.has(task) || this.queued(task);
  }

  /** Ends the child's exit beside the loop: true when the kernel then records it (false if it failed). */
  async endBeside(task: string, ending: Promise<boolean>): Promise<boolean> {
    this.ending.set(task, ending);
    return ending.catch(() => false).finally(() => this.ending.delete(task));
  }

  /** The exits for the next tick; their children count as in the tick until tickDone. */
  take(): ExitNotice[] {
    const taken = this.exits.splice(0);
    this.inTick = new Set(taken.map((e) => e.task_id));
    return taken;
  }

  tickDone(): void {
    this.inTick = new Set();
  }

  /**
   * Children whose exit is being ended beside the loop, or was and waits in `exits`: the
   * tick leaves them as running until it is handed their exit (TickInput.ending).
   */
  endingTasks(): string[] {
    return [...this.ending.keys(), ...this.exits.filter((e) => e.recorded).map((e) => e.task_id)];
  }

  /** Resolves once no exit is being ended beside the loop (a drop or a cancel waits for it). */
  async ended(): Promise<void> {
    await Promise.allSettled([...this.ending.values()]);
  }
}
