import type { Plan, PlanChild } from '../plan/plan.js';
import type { TickPorts } from '../ports/tick-ports.js';
import type { BatchRecord, ChildRecord } from '../records/record.js';
import type { HeadMoved } from '../records/report.js';
import { park } from '../records/transitions.js';
import { machineOf } from '../machines/machines.js';
import { LOCAL_MACHINE } from '../basics/ids.js';
import type { MachinePool } from '../machines/machines.js';

// What every step of a tick shares: the ports, the record as it stands, the plan, and the
// helpers that persist it. Every step persists before the next (DESIGN §4). The steps that
// move lanes along (WRITTEN_AT_END) write the record once, when the next step begins,
// instead of once a child: a step that integrates three lanes writes it once, and a crash
// before that write leaves the integrations to the next tick's adopt step, as a crash
// after one of them always did. A journal line that comes after a change not written yet
// waits for that write: the journal does not tell of a change the record may lose.

/** The tick step in progress: names the crash point after its persist (`tick-persist:<step>`). */
export type TickStep =
  | 'start'
  | 'cancel'
  | 'drop'
  | 'approve'
  | 'notices'
  | 'machines'
  | 'adopt'
  | 'release'
  | 'lineage'
  | 'observe'
  | 'commit'
  | 'integrate'
  | 'admit'
  | 'final'
  | 'report';

/**
 * Steps each of whose changes is found again or repeated after a crash (adopted
 * integrations, delivery commits found by their trailers, kernels re-read, lanes offered
 * again): written at their end. The others (a resume, the final verification) write each change.
 */
const WRITTEN_AT_END: ReadonlySet<TickStep> = new Set([
  'adopt',
  'release',
  'observe',
  'commit',
  'integrate',
  'admit',
]);

export class TickContext {
  private current: TickStep = 'start';
  /** The record has changes not written yet, and `held` the journal lines that wait for them. */
  private unsaved = false;
  private readonly held: [string, Record<string, unknown>][] = [];
  /**
   * The paths each lane changed, as read by QA in this tick: the delivery commit of the same
   * tick takes them from here instead of asking git again (a lane whose executor exited is
   * not written to between the two).
   */
  readonly qaChangedPaths = new Map<string, readonly string[]>();
  /** Integrated lanes the steward is removing already (TickInput.releasing): not looked at again. */
  releasing: ReadonlySet<string> = new Set();
  /** TickInput.releaseChecksClean and keptChanged. */
  releaseChecksClean = false;
  keptChanged: ReadonlySet<string> = new Set();
  /** Enrolled children whose exit is ended beside the loop (TickInput.ending): left as running. */
  ending: ReadonlySet<string> = new Set();
  /** TickInput.coordinated: the coordinator's own steward acts on the report. */
  coordinated = false;
  /** The report's head_moved, decided by the integrations (coordinated ticks only). */
  headMoved: HeadMoved | null = null;
  /** TickInput.machines with the unreachable and lost ones; null: every lane is local. */
  machines: MachinePool | null = null;

  constructor(
    readonly ports: TickPorts,
    public record: BatchRecord,
    readonly plan: Plan,
  ) {}

  now(): string {
    return this.ports.clock.now().toISOString();
  }

  get step(): TickStep {
    return this.current;
  }

  /** Begins `step`, once what the step before changed is on disk. */
  enter(step: TickStep): void {
    this.persist();
    this.current = step;
  }

  /** The record (stamped) as it is now: written at once, or when the step ends (WRITTEN_AT_END). */
  save(next: BatchRecord): void {
    this.record = { ...next, updated_at: this.now() };
    this.unsaved = true;
    if (!WRITTEN_AT_END.has(this.current)) this.persist();
  }

  /** Writes the record if it has changes, then the journal lines that waited for them. */
  persist(): void {
    if (this.unsaved) {
      this.ports.store.writeRecord(this.record);
      this.unsaved = false;
      this.ports.crashPoint(`tick-persist:${this.step}`);
    }
    for (const [event, fields] of this.held.splice(0)) this.ports.store.journal(event, fields);
  }

  journal(event: string, fields: Record<string, unknown> = {}): void {
    if (this.unsaved) this.held.push([event, fields]);
    else this.ports.store.journal(event, fields);
  }

  child(taskId: string): ChildRecord {
    const found = this.record.children.find((c) => c.task_id === taskId);
    if (!found) throw new Error(`no child ${taskId}`);
    return found;
  }

  planChild(taskId: string): PlanChild {
    const found = this.plan.children.find((c) => c.id === taskId);
    if (!found) throw new Error(`child ${taskId} is not in the confirmed plan`);
    return found;
  }

  /**
   * The child's lane is on a machine that does not answer (reconnecting or lost): it is not
   * looked at, committed or counted this tick; it stays as it is. A tick told of no machines
   * cannot reach one either: a lane on a machine is left alone then too (not parked as lost
   * because the coordinator's own git does not see it).
   */
  away(child: Pick<ChildRecord, 'machine'>): boolean {
    const pool = this.machines;
    if (pool === null) return child.machine !== undefined && child.machine !== LOCAL_MACHINE;
    return pool.unreachable.has(machineOf(child)) || pool.lost.has(machineOf(child));
  }

  /** The batch branch moved to `head`: in the report, and handed out at once (TickPorts.headMovedEarly). */
  moveHead(moved: HeadMoved): void {
    this.headMoved = moved;
    this.ports.headMovedEarly?.(moved);
  }

  /** Parks a child (its pending dependents become skipped_blocked) and persists. */
  park(taskId: string, reason: string): void {
    const before = new Set(
      this.record.children.filter((c) => c.state === 'skipped_blocked').map((c) => c.task_id),
    );
    this.save(park(this.record, taskId, reason));
    this.journal('parked', { task: taskId, reason });
    const skipped = this.record.children
      .filter((c) => c.state === 'skipped_blocked' && !before.has(c.task_id))
      .map((c) => c.task_id);
    if (skipped.length) this.journal('dependents-skipped', { task: taskId, skipped });
  }
}
