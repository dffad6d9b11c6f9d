import { IN_FLIGHT_STATES } from '../core/records/record.js';
import type { ChildRecord } from '../core/records/record.js';
import { sumUsage } from '../core/records/usage.js';
import type { Usage } from '../core/records/usage.js';
import type { BatchFiles } from '../store/batch-files.js';

// What the lane rows take from each lane's kernel record (its attempts: how many, when the
// first began and the last ended, what they spent), read again only for the lanes that may
// have changed: those an event named, those that began a run or left flight, and a few
// more each redraw in turn (what changes without an event: an agent's spending). Reading
// all hundred kernel records at every redraw while a hundred lanes exit was 10-45 ms of the
// thread that reads keys (many_lanes, docs/PERFORMANCE.md "Many lanes").

export interface LaneKernel {
  attempt: number;
  startedAt: number | null;
  /** The last attempt's end (ISO), if it ended. */
  lastEndedAt: string | null;
  usage: Usage | null;
}

/** Lanes read again in turn at each redraw, beside those that changed. */
export const KERNELS_IN_TURN = 10;

const NONE: LaneKernel = { attempt: 0, startedAt: null, lastEndedAt: null, usage: null };

export class LaneKernels {
  private readonly known = new Map<string, { child: string; kernel: LaneKernel }>();
  private readonly touched = new Set<string>();
  private everything = true;
  private turn = 0;

  constructor(private readonly files: Pick<BatchFiles, 'readKernel'>) {}

  /** An event named the lane: its record is read at the next redraw. */
  touch(task: string): void {
    this.touched.add(task);
  }

  /** Every lane's record is read at the next redraw. */
  touchAll(): void {
    this.everything = true;
  }

  /** Each child's kernel facts, by task (children without a lane have none). */
  of(children: readonly ChildRecord[]): Map<string, LaneKernel> {
    const out = new Map<string, LaneKernel>();
    const inTurn = new Set<number>();
    for (let k = 0; k < Math.min(KERNELS_IN_TURN, children.length); k++)
      inTurn.add((this.turn + k) % children.length);
    this.turn = children.length ? (this.turn + KERNELS_IN_TURN) % children.length : 0;
    children.forEach((c, i) => {
      if (!c.lane) return out.set(c.task_id, NONE);
      // (what in the record goes with a change of its kernel: a new run, leaving flight)
      const child = `${c.lane.run_id}|${IN_FLIGHT_STATES.has(c.state)}`;
      const known = this.known.get(c.task_id);
      const fresh =
        known && known.child === child && !this.everything && !this.touched.has(c.task_id) && !inTurn.has(i);
      const kernel = fresh ? known.kernel : this.read(c.task_id);
      this.known.set(c.task_id, { child, kernel });
      out.set(c.task_id, kernel);
    });
    this.everything = false;
    this.touched.clear();
    return out;
  }

  private read(task: string): LaneKernel {
    const read = this.files.readKernel(task);
    if (read.kind !== 'ok') return NONE;
    const attempts = read.record.attempts;
    const first = attempts[0];
    return {
      attempt: attempts.length,
      startedAt: first ? Date.parse(first.started_at) : null,
      lastEndedAt: attempts.at(-1)?.ended_at ?? null,
      usage: sumUsage(attempts),
    };
  }
}
