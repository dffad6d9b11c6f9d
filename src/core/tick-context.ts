import type { Plan, PlanChild } from './plan.js';
import type { TickPorts } from './ports.js';
import type { BatchRecord, ChildRecord } from './record.js';
import { park } from './transitions.js';

// What every step of a tick shares: the ports, the record as last persisted, the plan,
// and the helpers that persist a change before the next step looks at it.

/** The tick step in progress: names the crash point after each persist (`tick-persist:<step>`). */
export type TickStep =
  | 'start'
  | 'cancel'
  | 'drop'
  | 'approve'
  | 'notices'
  | 'adopt'
  | 'release'
  | 'lineage'
  | 'observe'
  | 'commit'
  | 'integrate'
  | 'admit'
  | 'final'
  | 'report';

export class TickContext {
  step: TickStep = 'start';
  /**
   * The paths each lane changed, as read by QA in this tick: the delivery commit of the same
   * tick takes them from here instead of asking git again (a lane whose executor exited is
   * not written to between the two).
   */
  readonly qaChangedPaths = new Map<string, readonly string[]>();
  /** Integrated lanes the steward is removing already (TickInput.releasing): not looked at again. */
  releasing: ReadonlySet<string> = new Set();
  /** Enrolled children whose exit is ended beside the loop (TickInput.ending): left as running. */
  ending: ReadonlySet<string> = new Set();

  constructor(
    readonly ports: TickPorts,
    public record: BatchRecord,
    readonly plan: Plan,
  ) {}

  now(): string {
    return this.ports.clock.now().toISOString();
  }

  /** Persists the record (stamped) before anything else happens. */
  save(next: BatchRecord): void {
    const stamped = { ...next, updated_at: this.now() };
    this.ports.store.writeRecord(stamped);
    this.record = stamped;
    this.ports.crashPoint(`tick-persist:${this.step}`);
  }

  journal(event: string, fields: Record<string, unknown> = {}): void {
    this.ports.store.journal(event, fields);
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
