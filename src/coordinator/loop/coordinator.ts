import { dirname } from 'node:path';
import type { Config } from '../../core/settings/config.js';
import { endAttempt, laneFactsOf } from '../../core/steps/attempt-end.js';
import { batchBranch } from '../../core/basics/ids.js';
import type { Plan } from '../../core/plan/plan.js';
import type { BatchState, ChildRecord } from '../../core/records/record.js';
import { IN_FLIGHT_STATES, TERMINAL_BATCH_STATES } from '../../core/records/record.js';
import type { Report } from '../../core/records/report.js';
import type { Approval } from '../../core/ways-out/resume.js';
import type { ReviewVerdict } from '../../core/tick/tick.js';
import type { CoordinatorStorePort } from '../../core/ports/store-port.js';
import type { TickPorts } from '../../core/ports/tick-ports.js';
import type { WorktreePort } from '../../core/ports/worktree-port.js';
import type { ExitInfo, Host, LaneSession } from '../../hosts/host.js';
import { ExecutorRunner } from '../executors/executor-runner.js';
import type { RunnerEvents, RunnerOptions } from '../executors/executor-runner.js';
import type { LaneHealth } from '../executors/lane-watch.js';
import { Steward } from '../lanes/steward.js';
import { machineInput, tickThroughAway, type CoordinatorMachines } from './machines.js';
import { StewardJobs } from '../lanes/steward-jobs.js';
import { HUMAN_STOPS } from '../../core/ways-out/wait-verdict.js';
import { Effects } from './effects.js';
import { reportUnknownWorktrees } from './unknown-worktrees.js';
import { WaysOut } from './ways-out.js';
import { coordinatorThread, pacedPorts } from './paced-ports.js';

// The parent (DESIGN §7): tick → carry out every effect → wait for any lane event → tick.
// The tick is handed the events since the last one and a snapshot of what is in flight;
// its report's handoffs are the effects, carried out in one switch (effects.ts).
// Executors start in the same turn; lanes are made and removed by the steward's jobs
// beside the loop (steward-jobs.ts), so a wave of integrations never waits for worktree
// bookkeeping, and a lane just made is offered to the tick right after its job. Every
// decision stays in the tick; this loop only acts and waits.

export type CoordinatorEvent =
  | { kind: 'report'; report: Report }
  | { kind: 'provisioned'; task: string; path: string }
  | { kind: 'launched'; task: string; attempt: number; session: LaneSession }
  | { kind: 'exited'; task: string; code: number | null; signal: string | null }
  | { kind: 'released'; task: string }
  | { kind: 'health'; task: string; health: LaneHealth; what: string }
  | { kind: 'paused'; why: string }
  | { kind: 'notice'; text: string };

export interface CoordinatorOptions {
  batchId: string;
  repoRoot: string;
  /** The ways out need the state directory itself (their requests, the trash), hence CoordinatorStorePort. */
  ports: TickPorts & { store: CoordinatorStorePort };
  /** The lane worktrees (src/git/lane-worktrees.ts). */
  worktrees: WorktreePort;
  /** The repository's common git dir: the worktrees at start are read from its files (unknown-worktrees.ts). */
  commonDir?: string;
  config: Config;
  host: Host;
  approval?: Approval;
  onEvent?: (event: CoordinatorEvent) => void;
  /** How often live lanes are checked for stalls and scope drift. */
  laneCheckMs?: number;
  machines?: CoordinatorMachines; // (the machines lanes run on; absent: every lane local)
  /** Keep running when the batch stops (needs a human, ends, pauses): the TUI decides when to leave. */
  waitForHuman?: boolean;
}

export interface CoordinatorResult {
  state: BatchState;
  /** Dispatch was paused (suspect dispatch or the user) with nothing left running. */
  paused: boolean;
  /** Lanes wait for a human review verdict and nothing else can move. */
  waitingForReview: string[];
  report: Report;
}

export const LANE_CHECK_MS = 3000;

export class Coordinator {
  readonly runner: ExecutorRunner;
  private readonly steward: Steward;
  /** Provisions and releases, carried out beside the loop (src/coordinator/steward-jobs.ts). */
  private readonly jobs: StewardJobs;
  /** The ports, and the lane jobs told at once when a tick's integrations move the head. */
  private readonly tickPorts: TickPorts;
  /** Carries out each report's effects (effects.ts). */
  private readonly effects: Effects;
  private plan: Plan;
  private reviews: ReviewVerdict[] = [];
  private approval: Approval | undefined;
  private wake: (() => void) | null = null;
  private woken = false;
  private stopping = false;
  /** Drop and cancel: the TUI's keys and the requests of `lanes drop` / `lanes cancel`. */
  readonly waysOut: WaysOut;
  lastReport: Report | null = null;

  constructor(private readonly options: CoordinatorOptions) {
    const store = options.ports.store;
    this.approval = options.approval;
    const { batchId, config, host, ports, worktrees, machines } = options;
    const logDir = (task: string) => store.logDir(task);
    this.steward = new Steward(options.repoRoot, batchId, config, logDir, worktrees, machines);
    this.jobs = new StewardJobs({
      steward: this.steward,
      store,
      host,
      batchBranch: batchBranch(batchId),
      wake: () => this.signal(),
      provisioned: (task, path) => this.emit({ kind: 'provisioned', task, path }),
      released: (task) => this.emit({ kind: 'released', task }),
      notice: (text) => this.emit({ kind: 'notice', text }),
      offerFacts: (path) => options.ports.git.offerFacts(path),
    });
    this.tickPorts = pacedPorts(ports, (moved) => this.effects.headMovedEarly(moved));
    const events: RunnerEvents = {
      launched: (task, attempt, session) => this.emit({ kind: 'launched', task, attempt, session }),
      exited: (task, exit) => this.emit({ kind: 'exited', task, code: exit.code, signal: exit.signal }),
      paused: (why) => this.emit({ kind: 'paused', why }),
      health: (task, health, what) => this.emit({ kind: 'health', task, health, what }),
      wake: () => this.signal(),
    };
    const endAttempt: RunnerOptions['endAttempt'] = (child, exit) => this.endAttempt(child, exit);
    const runnerOptions = { clock: ports.clock, worktrees, endAttempt, machines };
    this.plan = store.readPlan();
    this.runner = new ExecutorRunner(batchId, store, config, host, this.plan, events, runnerOptions);
    this.effects = new Effects({ jobs: this.jobs, runner: this.runner });
    this.waysOut = new WaysOut({
      worktrees,
      store,
      runner: this.runner,
      wake: () => this.signal(),
      notice: (text) => this.emit({ kind: 'notice', text }),
    });
  }

  get paused(): boolean {
    return this.runner.paused;
  }
  get pauseReason(): string | null {
    return this.runner.pauseReason;
  }

  private emit(event: CoordinatorEvent): void {
    this.options.onEvent?.(event);
  }
  private signal(): void {
    this.woken = true;
    this.wake?.();
  }

  private nextEvent(): Promise<void> {
    if (this.woken) {
      this.woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.wake = () => {
        this.wake = null;
        this.woken = false;
        resolve();
      };
    });
  }

  // Intents from the user (TUI keys, CLI flags). Each wakes the loop; the tick decides.
  approve(approval: Approval): void {
    this.approval = approval;
    this.signal();
  }
  review(verdict: ReviewVerdict): void {
    this.reviews.push(verdict);
    this.signal();
  }
  setPaused(paused: boolean, why = 'paused by the user'): void {
    this.runner.setPaused(paused, why);
    this.options.ports.store.journal(paused ? 'dispatch-paused' : 'resumed', { why, dispatch: !paused });
    this.signal();
  }
  /** `R`: a parked child is resumed on its own; a running executor is stopped (its exit goes through QA). */
  retry(taskId: string): void {
    const session = this.runner.sessionOf(taskId);
    if (session?.running) return session.kill();
    const child = this.options.ports.store.readRecord().children.find((c) => c.task_id === taskId);
    if (child?.state === 'needs_human')
      this.approve({ confirmationTime: this.options.ports.clock.now().toISOString(), only: [taskId] });
  }
  stop(): void {
    this.stopping = true;
    this.signal();
  }
  /** The user's interrupt (Ctrl-C, SIGTERM): executors stopped without counting their ends, then stop. */
  interrupt(): void {
    void this.runner.interrupt().finally(() => this.stop());
  }
  async run(): Promise<CoordinatorResult> {
    const lanesRoot = dirname(this.steward.lanePath('x'));
    const notice = (text: string) => this.emit({ kind: 'notice', text });
    await reportUnknownWorktrees({ ...this.options, store: this.options.ports.store, lanesRoot, notice });
    const every = this.options.laneCheckMs ?? LANE_CHECK_MS;
    const timer = setInterval(() => void this.runner.watch.check(), every);
    timer.unref();
    const unwatch = this.options.machines?.watch?.(() => this.signal()); // (a machine away, back, lost)
    this.waysOut.watchRequests();
    let inFlight = new Set<string>();
    try {
      for (;;) {
        await coordinatorThread.turn(); // (keys and frames first: a tick of many lanes is long)
        const waysOut = await this.waysOut.beforeTick(); // (drop, cancel: their executors stopped)
        // A drop or a cancel never meets a lane half made or half removed.
        if (waysOut.input.drops.length > 0 || waysOut.input.cancel) {
          await this.jobs.idle();
          await this.runner.queue.ended();
        }
        const lanes = await this.jobs.take();
        this.runner.throwFailure(); // (an executor that could not be started, beside the loop)
        // A tick that admits lanes integrates nothing, so the head they were brought to
        // stays the head: the exits wait for the next tick without offers (at most
        // max_parallel lanes are offered before one is taken: the wait is short).
        // Review verdicts can settle a child too: they wait with the exits.
        const holdExits = lanes.offers.length > 0;
        const events = holdExits ? { exited: [], turnEnds: [] } : this.runner.queue.take();
        const input = {
          ...waysOut.input,
          ...lanes,
          ...events,
          coordinated: true,
          inFlight: this.runner.inFlight(),
          releasing: [...this.jobs.releases.releasing(), ...this.jobs.releases.refusedOnes()],
          releaseChecksClean: true,
          keptChanged: this.jobs.releases.keptForChanges(),
          ending: this.runner.queue.endingTasks(), // (after the exits are taken: those are not ending)
          reviews: holdExits ? [] : this.reviews.splice(0),
          dispatchPaused: this.runner.paused,
          ...machineInput(this.options.machines),
          ...(this.approval ? { approval: this.approval } : {}),
        };
        this.approval = undefined;
        const tickDone = () => this.runner.queue.tickDone();
        const report = await tickThroughAway(this.options.machines, this.tickPorts, input).finally(tickDone);
        await this.waysOut.afterTick(waysOut.files, report.children);
        if (input.approval) {
          this.plan = this.options.ports.store.readPlan();
          this.runner.setPlan(this.plan);
        }
        this.lastReport = report;
        inFlight = this.noteSlots(report, inFlight);
        this.emit({ kind: 'report', report });
        let again = await this.effects.carryOut(report);
        if (this.runner.queue.size || this.reviews.length) again = true;
        if (report.batch_state === 'failed' || report.batch_state === 'cancelled') this.runner.killAll();
        if (TERMINAL_BATCH_STATES.has(report.batch_state))
          this.jobs.discardUndecided(lanes.offers, report.children);
        if (again) continue;
        // A lane job still out finishes first (it wakes the loop): its offer or release is recorded.
        const stopped =
          (TERMINAL_BATCH_STATES.has(report.batch_state) || HUMAN_STOPS.has(report.batch_state)) &&
          !this.jobs.busy;
        const idle = this.runner.live.size === 0 && !this.woken && !this.jobs.busy;
        if (this.stopping || ((stopped || idle) && !this.options.waitForHuman)) return this.result(report);
        await this.nextEvent();
        if (this.stopping && this.runner.queue.size === 0) return this.result(report);
      }
    } finally {
      clearInterval(timer);
      unwatch?.();
      this.waysOut.stopWatching();
      await this.jobs.idle();
      await this.runner.dispose();
      this.options.ports.store.flushReport();
    }
  }

  private result(report: Report): CoordinatorResult {
    const waiting = report.handoffs
      .filter((h) => h.action === 'executor' && h.next_obligation === 'review')
      .map((h) => h.task_id);
    return { state: report.batch_state, paused: this.runner.paused, waitingForReview: waiting, report };
  }

  /** Journals slot-released for children that left flight since the last report. */
  private noteSlots(report: Report, before: Set<string>): Set<string> {
    const now = new Set(report.children.filter((c) => IN_FLIGHT_STATES.has(c.state)).map((c) => c.task_id));
    for (const task of before) {
      if (now.has(task)) continue;
      const state = report.children.find((c) => c.task_id === task)?.state;
      this.options.ports.store.journal('slot-released', { task, state });
    }
    return now;
  }

  /**
   * An executor's exit ended beside the loop (DESIGN §7): its QA and delivery commit run at
   * once, lane by lane, instead of one tick at a time; the tick then finds them done.
   */
  private async endAttempt(child: ChildRecord, exit: ExitInfo & { host: string }): Promise<boolean> {
    const planned = this.plan.children.find((c) => c.id === child.task_id);
    if (child.state !== 'enrolled' || !child.lane?.run_id || !planned) return false;
    return endAttempt(this.tickPorts, laneFactsOf(this.options.batchId, child), planned, exit);
  }
}
