import type { Coordinator, CoordinatorEvent } from '../coordinator/loop/coordinator.js';
import type { LaneHealth } from '../coordinator/executors/lane-watch.js';
import type { Plan } from '../core/plan/plan.js';
import { IN_FLIGHT_STATES, INTEGRATED_STATES, TERMINAL_BATCH_STATES } from '../core/records/record.js';
import type { BatchState, ChildState } from '../core/records/record.js';
import type { Report } from '../core/records/report.js';
import { computeWaves } from '../core/plan/waves.js';
import type { LaneSession } from '../hosts/host.js';
import type { BatchFiles } from '../store/batch-files.js';
import { MIN_INTERVAL_MS, RedrawSchedule } from './redraw-pace.js';
import { sumUsage } from '../core/records/usage.js';
import { LaneKernels } from './lane-kernels.js';
import type { Usage } from '../core/records/usage.js';

// The views take the record's state names from here (components import only src/tui).
export type { BatchState, ChildState };
// The TUI's view of the batch: a snapshot that React reads with useSyncExternalStore.
// The coordinator's events update it; listeners are told at most REDRAW_HZ times a second
// (fewer when frames are costly: src/tui/redraw-pace.ts), and pane output only counts for
// panes on screen (hidden lanes keep their screen current in the pty host, undrawn).

export const REDRAW_HZ = 1000 / MIN_INTERVAL_MS;
const NOTICES_KEPT = 4;

export interface LaneRow {
  taskId: string;
  state: ChildState;
  attempt: number;
  qaFailures: number;
  startedAt: number | null;
  endedAt: number | null;
  reason: string | null;
  health: LaneHealth | null;
  reviewPending: boolean;
  running: boolean;
  /** What the lane's agent reported it spent, over its attempts (null: nothing, as for a command). */
  usage: Usage | null;
  /** The machine its lane is on, when the batch has machines and the child a lane (the list shows it). */
  machine?: string;
}

export interface TuiSnapshot {
  version: number;
  batchId: string;
  branch: string;
  batchState: BatchState;
  wave: number;
  waves: number;
  integrated: number;
  total: number;
  startedAt: number;
  /** When the batch reached an end state (the clock stops there); null while it runs. */
  endedAt: number | null;
  rows: LaneRow[];
  /** The lanes' usage summed (null: no lane reported any). */
  usage: Usage | null;
  paused: boolean;
  pauseReason: string | null;
  notices: string[];
  /** The batch's machines that do not answer now (reconnecting) or were given up (lost). */
  machinesAway: { name: string; state: 'reconnecting' | 'lost' }[];
}

/** The row drawn before while nothing in it changed: the list renders only rows that did. */
const kept = (old: LaneRow | undefined, row: LaneRow): LaneRow =>
  old && JSON.stringify(old) === JSON.stringify(row) ? old : row;

export class TuiStore {
  private snapshot: TuiSnapshot;
  private listeners = new Set<() => void>();
  /** (settled: the screens on show have parsed all they hold) */
  private readonly redraws = new RedrawSchedule(
    () => this.redraw(),
    () => Promise.all(this.onScreen().map((s) => s?.screen?.flushed())),
  );
  private visible = new Set<string>();
  /** The lanes' kernel facts, read again only where they may have changed (lane-kernels.ts). */
  private readonly kernels: LaneKernels;
  private health = new Map<string, LaneHealth>();
  /** Each child's wave, as the confirmation and `plan check` count them (1-based). */
  private readonly waveOf = new Map<string, number>();
  readonly sessions = new Map<string, LaneSession>();
  readonly shells = new Map<string, LaneSession>();

  constructor(
    private readonly files: BatchFiles,
    plan: Plan,
    private coordinator: Coordinator | null = null,
  ) {
    this.kernels = new LaneKernels(files);
    const record = files.readRecord();
    const waves = computeWaves(plan.children, record.max_parallel);
    waves.forEach((wave, i) => wave.forEach((c) => this.waveOf.set(c.id, i + 1)));
    this.snapshot = {
      version: 0,
      batchId: record.batch_id,
      branch: record.branch,
      batchState: record.batch_state,
      wave: 0,
      waves: waves.length,
      integrated: 0,
      total: record.children.length,
      startedAt: Date.now(),
      endedAt: null,
      rows: [],
      usage: null,
      paused: false,
      pauseReason: null,
      notices: [],
      machinesAway: [],
    };
    this.applyReport(null);
  }

  attach(coordinator: Coordinator): void {
    this.coordinator = coordinator;
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getSnapshot = (): TuiSnapshot => this.snapshot;

  /** Marks the view changed; listeners hear of it at most REDRAW_HZ times a second (see RedrawSchedule). */
  private changed = (): void => this.redraws.request();

  private redraw(): void {
    if (this.stale) this.rebuildRows();
    this.snapshot = { ...this.snapshot, version: this.snapshot.version + 1 };
    for (const l of this.listeners) l();
  }

  /** Output of a pane on screen: a redraw, sooner once it has gone quiet (redraw-pace.ts). */
  private shown = (): void => (this.changed(), this.redraws.output());

  private onScreen = () => [...this.visible].flatMap((t) => [this.sessions.get(t), this.shells.get(t)]);
  private readonly parsing = new Set<string>();

  /**
   * The screen model parses behind the pty (it may run chunks ahead): a redraw when it has
   * caught up, so the last lines of a burst reach the screen even when no output follows.
   */
  private redrawWhenParsed(task: string, session: LaneSession): void {
    const screen = session.screen;
    if (!screen || this.parsing.has(task)) return;
    this.parsing.add(task);
    const wait = (written: Promise<void>): Promise<void> =>
      written.then(() => {
        const now = screen.flushed();
        if (now !== written) return wait(now); // more arrived meanwhile
        this.parsing.delete(task);
        this.changed();
      });
    void wait(screen.flushed());
  }

  /** The panes on screen: only their output causes redraws. */
  setVisible(taskIds: readonly string[]): void {
    this.visible = new Set(taskIds);
  }

  notice(text: string): void {
    this.snapshot = { ...this.snapshot, notices: [...this.snapshot.notices, text].slice(-NOTICES_KEPT) };
    this.changed();
  }

  onEvent = (event: CoordinatorEvent): void => {
    switch (event.kind) {
      case 'report':
        this.refresh(event.report);
        return;
      case 'launched':
        this.kernels.touch(event.task);
        this.sessions.set(event.task, event.session);
        event.session.onOutput(() => {
          if (!this.visible.has(event.task)) return;
          this.shown();
          if (!event.session.screen?.onUpdate) this.redrawWhenParsed(event.task, event.session);
        });
        // A screen parsed in the pty worker says when a newer one has arrived: drawn then.
        event.session.screen?.onUpdate?.(() => {
          if (this.visible.has(event.task)) this.changed();
        });
        this.refresh();
        return;
      case 'exited':
        this.kernels.touch(event.task);
        this.health.delete(event.task);
        this.refresh();
        return;
      case 'health':
        this.health.set(event.task, event.health);
        this.refresh();
        return;
      case 'paused':
        this.notice(`dispatch paused: ${event.why}`);
        this.refresh();
        return;
      case 'notice':
        this.notice(event.text);
        return;
      default:
        return;
    }
  };

  /** Shell panes (`s`) count as visible output like executor panes. */
  addShell(taskId: string, session: LaneSession): void {
    this.shells.set(taskId, session);
    session.onOutput(() => {
      if (this.visible.has(taskId)) this.shown();
    });
    void session.exited.then(() => {
      this.shells.delete(taskId);
      this.changed();
    });
    this.changed();
  }

  private stale = false;
  private staleReport: Report | null = null;

  /**
   * The rows are rebuilt once a redraw, however many events came in between: a rebuild
   * reads the record and every lane's kernel record, and 100 lanes exiting together made
   * 100 rebuilds of 100 reads each on the thread that draws (many_lanes, docs/BENCH.md).
   */
  private refresh(report: Report | null = null): void {
    if (report) this.staleReport = report;
    this.stale = true;
    this.changed();
  }

  /** Rebuilds the rows from the record (and the last report's handoffs) and the kernel records, now. */
  applyReport(report: Report | null): void {
    if (report) this.staleReport = report;
    this.kernels.touchAll();
    this.rebuildRows();
    this.changed();
  }

  private rebuildRows(): void {
    const report = this.staleReport;
    this.staleReport = null;
    this.stale = false;
    const record = this.files.readRecord();
    const last = report ?? this.coordinator?.lastReport ?? null;
    const reviews = new Set(
      (last?.handoffs ?? [])
        .filter((h) => h.action === 'executor' && h.next_obligation === 'review')
        .map((h) => h.task_id),
    );
    // (a batch with machines shows each lane's machine, local ones too; one without, none)
    const withMachines = !!last?.machines || record.children.some((c) => c.machine !== undefined);
    const kernels = this.kernels.of(record.children);
    const before = new Map(this.snapshot.rows.map((r) => [r.taskId, r]));
    const rows: LaneRow[] = record.children.map((c) => {
      const kernel = kernels.get(c.task_id)!;
      const session = this.sessions.get(c.task_id);
      return kept(before.get(c.task_id), {
        taskId: c.task_id,
        state: c.state,
        attempt: kernel.attempt,
        qaFailures: c.qa_failures,
        startedAt: kernel.startedAt,
        endedAt: IN_FLIGHT_STATES.has(c.state) || !kernel.lastEndedAt ? null : Date.parse(kernel.lastEndedAt),
        reason: c.reason,
        health: this.health.get(c.task_id) ?? null,
        reviewPending: reviews.has(c.task_id),
        running: session?.running ?? false,
        usage: kernel.usage,
        ...(withMachines && c.lane !== null ? { machine: c.machine ?? 'local' } : {}),
      });
    });
    const started = record.children.filter((c) => c.state !== 'pending' && c.state !== 'skipped_blocked');
    const wave = started.length ? Math.max(...started.map((c) => this.waveOf.get(c.task_id) ?? 0)) : 0;
    const ended = TERMINAL_BATCH_STATES.has(record.batch_state);
    this.snapshot = {
      ...this.snapshot,
      batchState: record.batch_state,
      endedAt: ended ? (this.snapshot.endedAt ?? Date.now()) : null,
      wave,
      integrated: record.children.filter((c) => INTEGRATED_STATES.has(c.state)).length,
      rows,
      usage: sumUsage(rows),
      paused: this.coordinator?.paused ?? false,
      pauseReason: this.coordinator?.pauseReason ?? null,
      machinesAway: (last?.machines ?? []).flatMap((m) =>
        m.state === 'ready' ? [] : [{ name: m.name, state: m.state }],
      ),
    };
  }

  dispose(): void {
    this.redraws.dispose();
  }
}
