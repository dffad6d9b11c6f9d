import type { ExitNotice, TurnEndNotice } from '../../core/tick/tick.js';

// The executor exits and agents' turn ends on their way to the tick (DESIGN §7): those
// queued for the next tick, those the tick in progress was handed, and the exits being
// ended beside the loop (their QA and delivery commit running, core/steps/attempt-end.ts),
// which the tick leaves as running.

export class ExitQueue {
  /** Exits for the next tick. */
  readonly exits: ExitNotice[] = [];
  /** Turn ends for the next tick (their own event: a turn end is no exit). */
  readonly turnEnds: TurnEndNotice[] = [];
  /** Exits being ended beside the loop, by child. */
  private readonly ending = new Map<string, Promise<boolean>>();
  /** Children whose exit or turn end the tick in progress was handed (take). */
  private inTick = new Set<string>();

  push(notice: ExitNotice): void {
    this.exits.push(notice);
  }

  pushTurnEnd(notice: TurnEndNotice): void {
    this.turnEnds.push(notice);
  }

  /** Exits and turn ends waiting for the next tick. */
  get size(): number {
    return this.exits.length + this.turnEnds.length;
  }

  /** The child's exit or turn end is queued for the next tick. */
  queued(task: string): boolean {
    return [...this.exits, ...this.turnEnds].some((e) => e.task_id === task);
  }

  /** The tick in progress has the child's exit or turn end, or the next one will. */
  tickHas(task: string): boolean {
    return this.inTick.has(task) || this.queued(task);
  }

  /** Ends the child's exit beside the loop: true when the kernel then records it (false if it failed). */
  async endBeside(task: string, ending: Promise<boolean>): Promise<boolean> {
    this.ending.set(task, ending);
    return ending.catch(() => false).finally(() => this.ending.delete(task));
  }

  /** The exits and turn ends for the next tick; their children count as in the tick until tickDone. */
  take(): { exited: ExitNotice[]; turnEnds: TurnEndNotice[] } {
    const exited = this.exits.splice(0);
    const turnEnds = this.turnEnds.splice(0);
    this.inTick = new Set([...exited, ...turnEnds].map((e) => e.task_id));
    return { exited, turnEnds };
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
