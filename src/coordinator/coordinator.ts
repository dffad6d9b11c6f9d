import { dirname } from 'node:path';
import { resolveSettings } from '../core/batch-settings.js';
import { executorProfiles } from '../core/config.js';
import type { Config } from '../core/config.js';
import { crashPoint } from '../core/crash.js';
import { abandonAttempt, openAttempt, startAttempt } from '../core/kernel.js';
import { expectedHead } from '../core/lineage.js';
import type { Plan } from '../core/plan.js';
import type { BatchState } from '../core/record.js';
import { IN_FLIGHT_STATES, TERMINAL_BATCH_STATES } from '../core/record.js';
import type { Handoff, Report } from '../core/report.js';
import type { Approval } from '../core/resume.js';
import { tick } from '../core/tick.js';
import type { ExitNotice, ReviewVerdict } from '../core/tick.js';
import type { TickPorts } from '../core/ports.js';
import { changedPaths, listWorktrees, realpathOrNull } from '../git/worktrees.js';
import { readExitStatus } from '../hosts/exit-status.js';
import type { Host, LaneSession } from '../hosts/host.js';
import { isSameProcessAlive, processStartTime } from '../hosts/process-info.js';
import type { BatchFiles } from '../store/batch-files.js';
import { buildPrompt, fillArgv, writePromptFile } from './executor-launch.js';
import { DispatchHealth, StallWatch } from './health.js';
import { Steward } from './steward.js';
import { join } from 'node:path';
import { git } from '../git/git.js';

// The parent (SPEC §7): tick → act on every handoff → wait for any lane event → tick.
// A freed slot is refilled in the same turn: provisioning offers its lane to an
// immediate next tick. Every decision stays in the tick; this loop only acts and waits.

export type CoordinatorEvent =
  | { kind: 'report'; report: Report }
  | { kind: 'provisioned'; task: string; path: string }
  | { kind: 'launched'; task: string; attempt: number; session: LaneSession }
  | { kind: 'exited'; task: string; code: number | null; signal: string | null }
  | { kind: 'released'; task: string }
  | { kind: 'stalled'; task: string }
  | { kind: 'paused'; why: string }
  | { kind: 'notice'; text: string };

export interface CoordinatorOptions {
  batchId: string;
  repoRoot: string;
  ports: TickPorts & { store: BatchFiles };
  config: Config;
  host: Host;
  approval?: Approval;
  onEvent?: (event: CoordinatorEvent) => void;
  /** How often live lanes are checked for stalls; defaults from the config's stall timeout. */
  stallCheckMs?: number;
}

export interface CoordinatorResult {
  state: BatchState;
  /** Dispatch was paused (suspect dispatch or the user) with nothing left running. */
  paused: boolean;
  /** Lanes wait for a human review verdict and nothing else can move. */
  waitingForReview: string[];
  report: Report;
}

interface Live {
  session: LaneSession | null;
  runId: string;
  startedAt: number;
  stall: StallWatch;
}

export class Coordinator {
  readonly live = new Map<string, Live>();
  private readonly steward: Steward;
  private readonly health = new DispatchHealth();
  private plan: Plan;
  private exits: ExitNotice[] = [];
  private reviews: ReviewVerdict[] = [];
  private approval: Approval | undefined;
  private wake: (() => void) | null = null;
  private woken = false;
  private stopping = false;
  paused = false;
  pauseReason: string | null = null;

  constructor(private readonly options: CoordinatorOptions) {
    this.plan = options.ports.store.readPlan();
    this.approval = options.approval;
    this.steward = new Steward(options.repoRoot, options.batchId, options.config, (task) =>
      options.ports.store.tasks.logDir(task),
    );
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

  /** Intents from the user (TUI keys, CLI flags). */
  approve(approval: Approval): void {
    this.approval = approval;
    this.signal();
  }
  review(verdict: ReviewVerdict): void {
    this.reviews.push(verdict);
    this.signal();
  }
  setPaused(paused: boolean, why = 'paused by the user'): void {
    this.paused = paused;
    this.pauseReason = paused ? why : null;
    if (!paused) this.health.reset();
    this.options.ports.store.journal(paused ? 'dispatch-paused' : 'resumed', { why, dispatch: !paused });
    this.signal();
  }
  stop(): void {
    this.stopping = true;
    this.signal();
  }

  async run(): Promise<CoordinatorResult> {
    await this.reportUnknownWorktrees();
    const stallTimer = setInterval(
      () => void this.checkStalls(),
      this.options.stallCheckMs ?? Math.min(this.options.config.stall_timeout_ms / 4, 15_000),
    );
    stallTimer.unref();
    let offers: { task_id: string; path: string }[] = [];
    let setupFailures: { task_id: string; reason: string }[] = [];
    let inFlight = new Set<string>();
    try {
      for (;;) {
        const input = {
          offers,
          setupFailures,
          exited: this.exits.splice(0),
          reviews: this.reviews.splice(0),
          dispatchPaused: this.paused,
          ...(this.approval ? { approval: this.approval } : {}),
        };
        this.approval = undefined;
        const report = await tick(this.options.ports, input);
        if (input.approval) this.plan = this.options.ports.store.readPlan();
        offers = [];
        setupFailures = [];
        inFlight = this.noteSlots(report, inFlight);
        this.emit({ kind: 'report', report });

        let again = false;
        for (const refusal of report.lane_refusals) {
          again = true;
          const path = this.steward.lanePath(refusal.task_id);
          if (
            refusal.reason === 'batch_lane_base_mismatch' &&
            (await this.steward.moveToBase(path, expectedHead(this.options.ports.store.readRecord())))
          )
            offers.push({ task_id: refusal.task_id, path });
          else setupFailures.push({ task_id: refusal.task_id, reason: `lane refused: ${refusal.reason}` });
        }
        for (const handoff of report.handoffs) {
          if (await this.act(handoff, report, offers, setupFailures)) again = true;
        }
        if (this.exits.length) again = true;
        if (report.batch_state === 'failed') await this.killAll();
        if (!again && (TERMINAL_BATCH_STATES.has(report.batch_state) || report.batch_state === 'needs_human'))
          return this.result(report);
        if (again) continue;
        if (this.stopping) return this.result(report);
        if (this.live.size === 0 && !this.woken) return this.result(report);
        await this.nextEvent();
        if (this.stopping && this.exits.length === 0) return this.result(report);
      }
    } finally {
      clearInterval(stallTimer);
    }
  }

  private result(report: Report): CoordinatorResult {
    const waiting = report.handoffs
      .filter((h) => h.action === 'executor' && h.next_obligation === 'review')
      .map((h) => h.task_id);
    return { state: report.batch_state, paused: this.paused, waitingForReview: waiting, report };
  }

  /** Journals slot-released for children that left flight since the last report. */
  private noteSlots(report: Report, before: Set<string>): Set<string> {
    const now = new Set(report.children.filter((c) => IN_FLIGHT_STATES.has(c.state)).map((c) => c.task_id));
    for (const task of before)
      if (!now.has(task))
        this.options.ports.store.journal('slot-released', {
          task,
          state: report.children.find((c) => c.task_id === task)?.state,
        });
    return now;
  }

  private async act(
    h: Handoff,
    report: Report,
    offers: { task_id: string; path: string }[],
    failures: { task_id: string; reason: string }[],
  ): Promise<boolean> {
    const journal = this.options.ports.store.journal.bind(this.options.ports.store);
    if (h.action === 'provision') {
      const result = await this.steward.provision(h);
      if (result.kind === 'offer') {
        offers.push({ task_id: h.task_id, path: result.path });
        journal('lane-provisioned', { task: h.task_id, path: result.path });
        this.emit({ kind: 'provisioned', task: h.task_id, path: result.path });
      } else failures.push({ task_id: h.task_id, reason: result.reason });
      return true;
    }
    if (h.action === 'release') {
      const commit = report.children.find((c) => c.task_id === h.task_id)?.commit;
      if (!commit) return false;
      const kept = await this.steward.release(h, commit, `batch/${this.options.batchId}`);
      if (kept) {
        this.emit({ kind: 'notice', text: `${h.task_id}: ${kept}` });
        return false;
      }
      this.emit({ kind: 'released', task: h.task_id });
      return true;
    }
    return this.ensureExecutor(h);
  }

  /** Starts the executor an executor handoff asks for, unless it already runs (or ended unrecorded). */
  private async ensureExecutor(h: Extract<Handoff, { action: 'executor' }>): Promise<boolean> {
    const journal = this.options.ports.store.journal.bind(this.options.ports.store);
    const known = this.live.get(h.task_id);
    if (known && known.runId === h.run_id) return false;
    // Its exit is on the way to the next tick: never launch (or record) it twice.
    if (this.exits.some((e) => e.task_id === h.task_id)) return false;
    const store = this.options.ports.store;
    const read = store.readKernel(h.task_id);
    if (read.kind !== 'ok') return false;
    let kernel = read.record;
    const open = openAttempt(kernel);
    if (open) {
      const status = open.status_path ? readExitStatus(open.status_path) : null;
      if (status) {
        // It ended while lanes was away: record the exit now; QA decides.
        this.exits.push({ task_id: h.task_id, code: status.code, signal: status.signal, host: open.host });
        journal('executor-reattached', { task: h.task_id, attempt: open.n, ended: true, code: status.code });
        return true;
      }
      if (open.pid !== null && isSameProcessAlive(open.pid, open.pid_start)) {
        this.watchOrphan(h, open.pid, open.pid_start, open.status_path);
        journal('executor-reattached', { task: h.task_id, attempt: open.n, pid: open.pid });
        return false;
      }
      kernel = abandonAttempt(kernel, new Date().toISOString());
      store.writeKernel(kernel);
      journal('executor-relaunched', { task: h.task_id, lost_attempt: open.n });
    }
    if (h.next_obligation !== 'implement') return false;
    const child = this.plan.children.find((c) => c.id === h.task_id);
    if (!child) return false;
    const settings = resolveSettings(this.plan, this.options.config);
    const profileName = settings.executors[h.task_id] as string;
    const profile = executorProfiles(this.options.config)[profileName]!;
    const attempt = kernel.attempts.length + 1;
    const logDir = store.tasks.logDir(h.task_id);
    const prompt = buildPrompt({
      batchId: this.options.batchId,
      child,
      lanePath: h.lane_path,
      attempt,
      reworkFeedback: kernel.rework_feedback,
    });
    const promptFile = writePromptFile(logDir, attempt, prompt);
    const argv = fillArgv(profile, {
      prompt,
      prompt_file: promptFile,
      task: h.task_id,
      lane: h.lane_path,
      run: child.run ?? '',
    });
    const statusPath = join(logDir, `attempt-${attempt}.status`);
    const session = await this.options.host.open({
      taskId: h.task_id,
      runId: h.run_id,
      attempt,
      cwd: h.lane_path,
      argv,
      env: {
        ...profile.env,
        LANES_BATCH: this.options.batchId,
        LANES_TASK: h.task_id,
        LANES_RUN: h.run_id,
        LANES_LANE: h.lane_path,
        LANES_ATTEMPT: String(attempt),
        LANES_PROMPT_FILE: promptFile,
      },
      logPath: join(logDir, `attempt-${attempt}.log`),
      statusPath,
    });
    kernel = startAttempt(
      kernel,
      {
        host: session.host,
        paneId: session.paneId,
        pid: session.pid,
        pidStart: session.pid ? processStartTime(session.pid) : null,
        statusPath,
      },
      new Date().toISOString(),
    );
    store.writeKernel(kernel);
    journal('executor-spawned', { task: h.task_id, attempt, host: session.host, executor: profileName });
    this.track(h, session, statusPath);
    this.emit({ kind: 'launched', task: h.task_id, attempt, session });
    return false;
  }

  private track(h: Extract<Handoff, { action: 'executor' }>, session: LaneSession, statusPath: string): void {
    const startedAt = Date.now();
    const live: Live = { session, runId: h.run_id, startedAt, stall: new StallWatch(startedAt) };
    this.live.set(h.task_id, live);
    session.onOutput(() => live.stall.output(Date.now()));
    void session.exited.then(async (exit) => {
      crashPoint('after-executor-exit');
      const recorded = readExitStatus(statusPath) ?? exit;
      await this.onExit(h, live, recorded);
    });
  }

  /** An executor from before a restart that still runs: wait for it through its pid and status file. */
  private watchOrphan(
    h: Extract<Handoff, { action: 'executor' }>,
    pid: number,
    pidStart: string | null,
    statusPath: string | null,
  ): void {
    const live: Live = {
      session: null,
      runId: h.run_id,
      startedAt: Date.now(),
      stall: new StallWatch(Date.now()),
    };
    this.live.set(h.task_id, live);
    const timer = setInterval(() => {
      if (isSameProcessAlive(pid, pidStart)) return;
      clearInterval(timer);
      const status = statusPath ? readExitStatus(statusPath) : null;
      void this.onExit(h, live, status ?? { code: null, signal: 'lost' });
    }, 500);
  }

  private async onExit(
    h: Extract<Handoff, { action: 'executor' }>,
    live: Live,
    exit: { code: number | null; signal: string | null },
  ): Promise<void> {
    const journal = this.options.ports.store.journal.bind(this.options.ports.store);
    const ranFor = Date.now() - live.startedAt;
    const record = this.options.ports.store.readRecord();
    const lane = record.children.find((c) => c.task_id === h.task_id)?.lane;
    const changed = lane ? (await changedPaths(lane.path, lane.base_head)).length > 0 : true;
    const { suspect, unhealthy } = this.health.observeExit(ranFor, changed);
    if (suspect) journal('suspect-dispatch', { task: h.task_id, ran_ms: ranFor, code: exit.code });
    if (unhealthy && !this.paused) {
      this.paused = true;
      this.pauseReason =
        'dispatch-unhealthy: two executors in a row exited quickly without changing anything';
      journal('dispatch-paused', { reason: 'dispatch-unhealthy' });
      this.emit({ kind: 'paused', why: this.pauseReason });
    }
    this.live.delete(h.task_id);
    this.exits.push({
      task_id: h.task_id,
      code: exit.code,
      signal: exit.signal,
      host: live.session?.host ?? 'orphan',
    });
    this.emit({ kind: 'exited', task: h.task_id, code: exit.code, signal: exit.signal });
    this.signal();
  }

  private async checkStalls(): Promise<void> {
    const record = this.options.ports.store.readRecord();
    const now = Date.now();
    for (const [task, live] of this.live) {
      const lane = record.children.find((c) => c.task_id === task)?.lane;
      if (!lane) continue;
      const status = await git(lane.path, ['status', '--porcelain', '-z', '--untracked-files=all'], {
        okCodes: [128],
      });
      live.stall.files(status.stdout, now);
      if (live.stall.check(now, this.options.config.stall_timeout_ms)) {
        this.options.ports.store.journal('stalled', { task, quiet_ms: this.options.config.stall_timeout_ms });
        this.emit({ kind: 'stalled', task });
      }
    }
  }

  private async killAll(): Promise<void> {
    for (const live of this.live.values()) live.session?.kill();
  }

  /** Worktrees under the lanes root that the record does not know: reported, never deleted. */
  private async reportUnknownWorktrees(): Promise<void> {
    const root = dirname(this.steward.lanePath('x'));
    const record = this.options.ports.store.readRecord();
    const known = new Set(
      record.children.flatMap((c) => (c.lane ? [realpathOrNull(c.lane.path) ?? c.lane.path] : [])),
    );
    for (const w of await listWorktrees(this.options.repoRoot)) {
      const real = realpathOrNull(w.path) ?? w.path;
      if (!real.startsWith(`${realpathOrNull(root) ?? root}/`) || known.has(real)) continue;
      if (w.branch?.startsWith(`lane/${this.options.batchId}/`)) continue; // provisioned, not admitted yet: reused
      this.options.ports.store.journal('worktree-unknown', { path: w.path, branch: w.branch });
      this.emit({ kind: 'notice', text: `unknown worktree under the lanes root (left alone): ${w.path}` });
    }
  }
}
