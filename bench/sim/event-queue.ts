// The simulation's clock: events in time order (a binary heap; ties in the order they were
// scheduled, so a run repeats). Simulated milliseconds; nothing sleeps.

export interface SimEvent {
  at: number;
  kind: 'lane-ready' | 'exit' | 'released';
  task: string;
  /** A lane-ready's machine (the one its lane was made on). */
  machine?: string;
}

interface Entry {
  event: SimEvent;
  seq: number;
}

export class EventQueue {
  private readonly heap: Entry[] = [];
  private seq = 0;

  get size(): number {
    return this.heap.length;
  }

  push(event: SimEvent): void {
    this.heap.push({ event, seq: this.seq++ });
    let i = this.heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  /** The time of the next event, or Infinity when none is left. */
  peekTime(): number {
    return this.heap[0]?.event.at ?? Infinity;
  }

  pop(): SimEvent | undefined {
    const top = this.heap[0];
    const last = this.heap.pop();
    if (!top || !last) return undefined;
    if (this.heap.length > 0) {
      this.heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < this.heap.length && this.before(l, m)) m = l;
        if (r < this.heap.length && this.before(r, m)) m = r;
        if (m === i) break;
        this.swap(i, m);
        i = m;
      }
    }
    return top.event;
  }

  private before(i: number, j: number): boolean {
    const a = this.heap[i]!;
    const b = this.heap[j]!;
    return a.event.at < b.event.at || (a.event.at === b.event.at && a.seq < b.seq);
  }

  private swap(i: number, j: number): void {
    const t = this.heap[i]!;
    this.heap[i] = this.heap[j]!;
    this.heap[j] = t;
  }
}
