// Where a lane runs, in the simulation: machines of so many slots, a new lane on the least
// loaded machine (the most slots free; ties in the pool's order), a rework where its lane
// is. This stands in for the core's placement (src/core/machines/placement.ts), which was
// not on this branch when the simulation was written: the batch's max_parallel is
// machines × slots, so the record bounds the batch as the core's placement would.

export interface SimMachine {
  name: string;
  slots: number;
  used: number;
}

export class MachinePool {
  readonly machines: SimMachine[];
  private readonly where = new Map<string, SimMachine>();

  constructor(count: number, slots: number) {
    this.machines = Array.from({ length: count }, (_, i) => ({ name: `m${i + 1}`, slots, used: 0 }));
  }

  /** The machine a new lane goes to (and takes a slot of), or null when every slot is taken. */
  place(task: string): string | null {
    let best: SimMachine | null = null;
    for (const m of this.machines)
      if (m.used < m.slots && (best === null || m.slots - m.used > best.slots - best.used)) best = m;
    if (!best) return null;
    best.used++;
    this.where.set(task, best);
    return best.name;
  }

  machineOf(task: string): string | undefined {
    return this.where.get(task)?.name;
  }

  /** The child's lane left flight (integrated): its machine has the slot again. */
  free(task: string): void {
    const m = this.where.get(task);
    if (!m) return;
    m.used--;
    this.where.delete(task);
  }
}
