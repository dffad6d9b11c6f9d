import { join } from 'node:path';
import { resolveSettings } from '../core/batch-settings.js';
import { executorProfiles } from '../core/config.js';
import type { Config } from '../core/config.js';
import { crashPoint } from '../core/crash.js';
import { abandonAttempt, openAttempt, startAttempt } from '../core/kernel.js';
import type { Attempt } from '../core/kernel.js';
import type { Plan } from '../core/plan.js';
import type { Handoff } from '../core/report.js';
import type { ExitNotice } from '../core/tick.js';
import { changedPathsAtExit } from '../git/worktrees.js';
import { readExitStatus } from '../hosts/exit-status.js';
import type { ExitInfo, Host, LaneSession } from '../hosts/host.js';
import { isSameProcessAlive, processStartTime } from '../hosts/process-info.js';
import type { BatchFiles } from '../store/batch-files.js';
import { buildPrompt, fillArgv, writePromptFile } from './executor-launch.js';
import { DispatchHealth } from './health.js';
import { LaneWatch } from './lane-watch.js';
import type { LaneHealth } from './lane-watch.js';

// The parent's executor side: one executor per executor handoff that has none running,
// its exit recorded for the next tick, and an executor from before a restart found again
// (its status file, its pid, or its Herdr tab) instead of being started twice.

type ExecutorHandoff = Extract<Handoff, { action: 'executor' }>;

export interface RunnerEvents {
  launched(task: string, attempt: number, session: LaneSession): void;
  exited(task: string, exit: ExitInfo): void;
  paused(why: string): void;
  health(task: string, health: LaneHealth, what: string): void;
  /** An exit is queued: the loop should tick. */
  wake(): void;
}

interface Live {
  session: LaneSession | null;
  runId: string;
  startedAt: number;
}

const ORPHAN_POLL_MS = 500;

export class ExecutorRunner {
  readonly live = new Map<string, Live>();
  readonly exits: ExitNotice[] = [];
  readonly watch: LaneWatch;
  private readonly dispatch = new DispatchHealth();
  paused = false;
  pauseReason: string | null = null;

  constructor(
    private readonly batchId: string,
    private readonly store: BatchFiles,
    private readonly config: Config,
    private readonly host: Host,
    private plan: Plan,
    private readonly events: RunnerEvents,
  ) {
    this.watch = new LaneWatch({
      scopeOf: (task) => this.plan.children.find((c) => c.id === task)?.scope ?? ['**'],
      promptPatternsOf: (task) => this.profileOf(task).profile.prompt_patterns,
      stallTimeoutMs: config.stall_timeout_ms,
      onChange: (task, health, what) => {
        if (what === 'stalled') this.store.journal('stalled', { task, quiet_ms: config.stall_timeout_ms });
        this.events.health(task, health, what);
      },
    });
  }

  setPlan(plan: Plan): void {
    this.plan = plan;
  }

  setPaused(paused: boolean, why: string | null): void {
    this.paused = paused;
    this.pauseReason = paused ? why : null;
    if (!paused) this.dispatch.reset();
  }

  sessionOf(task: string): LaneSession | null {
    return this.live.get(task)?.session ?? null;
  }

  private profileOf(task: string) {
    const name = resolveSettings(this.plan, this.config).executors[task] as string;
    return { name, profile: executorProfiles(this.config)[name]! };
  }

  /** Acts on an executor handoff. Returns true when an exit was queued (the loop should tick again). */
  async ensure(h: ExecutorHandoff): Promise<boolean> {
    const known = this.live.get(h.task_id);
    if (known && known.runId === h.run_id) return false;
    if (this.exits.some((e) => e.task_id === h.task_id)) return false; // its exit is on the way to the next tick
    const read = this.store.readKernel(h.task_id);
    if (read.kind !== 'ok') return false;
    let kernel = read.record;
    const open = openAttempt(kernel);
    if (open) {
      const found = await this.findAgain(h, open);
      if (found !== 'lost') return found === 'ended';
      kernel = abandonAttempt(kernel, new Date().toISOString());
      this.store.writeKernel(kernel);
      this.store.journal('executor-relaunched', { task: h.task_id, lost_attempt: open.n });
    }
    if (h.next_obligation !== 'implement') return false;
    // Dispatch is paused (suspect dispatch, the user): no executor starts, a rework neither.
    if (this.paused) return false;
    const child = this.plan.children.find((c) => c.id === h.task_id);
    if (!child) return false;
    const { name, profile } = this.profileOf(h.task_id);
    const attempt = kernel.attempts.length + 1;
    const logDir = this.store.tasks.logDir(h.task_id);
    const prompt = buildPrompt({
      batchId: this.batchId,
      child,
      lanePath: h.lane_path,
      attempt,
      reworkFeedback: kernel.rework_feedback,
    });
    const promptFile = writePromptFile(logDir, attempt, prompt);
    const statusPath = join(logDir, `attempt-${attempt}.status`);
    const session = await this.host.open({
      taskId: h.task_id,
      runId: h.run_id,
      attempt,
      cwd: h.lane_path,
      argv: fillArgv(profile, {
        prompt,
        prompt_file: promptFile,
        task: h.task_id,
        lane: h.lane_path,
        run: child.run ?? '',
      }),
      env: {
        ...profile.env,
        LANES_BATCH: this.batchId,
        LANES_TASK: h.task_id,
        LANES_RUN: h.run_id,
        LANES_LANE: h.lane_path,
        LANES_ATTEMPT: String(attempt),
        LANES_PROMPT_FILE: promptFile,
      },
      logPath: join(logDir, `attempt-${attempt}.log`),
      statusPath,
    });
    const pidStart = session.pid ? processStartTime(session.pid) : null;
    kernel = startAttempt(
      kernel,
      { host: session.host, paneId: session.paneId, pid: session.pid, pidStart, statusPath },
      new Date().toISOString(),
    );
    this.store.writeKernel(kernel);
    this.store.journal('executor-spawned', { task: h.task_id, attempt, host: session.host, executor: name });
    this.track(h, session, statusPath);
    this.events.launched(h.task_id, attempt, session);
    return false;
  }

  /** An attempt started before lanes restarted: ended (status file), still running (pid or tab), or lost. */
  private async findAgain(h: ExecutorHandoff, open: Attempt): Promise<'ended' | 'running' | 'lost'> {
    const status = open.status_path ? readExitStatus(open.status_path) : null;
    if (status) {
      this.exits.push({ task_id: h.task_id, code: status.code, signal: status.signal, host: open.host });
      this.store.journal('executor-reattached', {
        task: h.task_id,
        attempt: open.n,
        ended: true,
        code: status.code,
      });
      return 'ended';
    }
    if (open.pane_id && this.host.reattach && open.host === this.host.name) {
      const session = await this.host.reattach(this.specFor(h, open), open.pane_id);
      if (session) {
        this.track(h, session, open.status_path);
        this.store.journal('executor-reattached', { task: h.task_id, attempt: open.n, pane: open.pane_id });
        this.events.launched(h.task_id, open.n, session);
        return 'running';
      }
    }
    if (open.pid !== null && isSameProcessAlive(open.pid, open.pid_start)) {
      this.watchOrphan(h, open);
      this.store.journal('executor-reattached', { task: h.task_id, attempt: open.n, pid: open.pid });
      return 'running';
    }
    return 'lost';
  }

  private specFor(h: ExecutorHandoff, open: Attempt) {
    const logDir = this.store.tasks.logDir(h.task_id);
    return {
      taskId: h.task_id,
      runId: h.run_id,
      attempt: open.n,
      cwd: h.lane_path,
      argv: [],
      env: {},
      logPath: join(logDir, `attempt-${open.n}.log`),
      statusPath: open.status_path ?? join(logDir, `attempt-${open.n}.status`),
    };
  }

  private track(h: ExecutorHandoff, session: LaneSession, statusPath: string | null): void {
    const live: Live = { session, runId: h.run_id, startedAt: Date.now() };
    this.live.set(h.task_id, live);
    this.watchLane(h, session);
    void session.exited.then(async (exit) => {
      crashPoint('after-executor-exit', h.task_id);
      await this.onExit(h, live, (statusPath ? readExitStatus(statusPath) : null) ?? exit);
    });
  }

  /** An executor from before a restart that still runs: wait for it through its pid and status file. */
  private watchOrphan(h: ExecutorHandoff, open: Attempt): void {
    const live: Live = { session: null, runId: h.run_id, startedAt: Date.now() };
    this.live.set(h.task_id, live);
    this.watchLane(h, null);
    const timer = setInterval(() => {
      if (isSameProcessAlive(open.pid!, open.pid_start)) return;
      clearInterval(timer);
      const status = open.status_path ? readExitStatus(open.status_path) : null;
      void this.onExit(h, live, status ?? { code: null, signal: 'lost' });
    }, ORPHAN_POLL_MS);
  }

  private watchLane(h: ExecutorHandoff, session: LaneSession | null): void {
    const lane = this.store.readRecord().children.find((c) => c.task_id === h.task_id)?.lane;
    if (lane) this.watch.watch(h.task_id, session, lane.path, lane.base_head);
  }

  private async onExit(h: ExecutorHandoff, live: Live, exit: ExitInfo): Promise<void> {
    this.watch.forget(h.task_id);
    const ranFor = Date.now() - live.startedAt;
    const lane = this.store.readRecord().children.find((c) => c.task_id === h.task_id)?.lane;
    const changed = lane ? (await changedPathsAtExit(lane.path, lane.base_head)).length > 0 : true;
    const { suspect, unhealthy } = this.dispatch.observeExit(ranFor, changed);
    if (suspect) this.store.journal('suspect-dispatch', { task: h.task_id, ran_ms: ranFor, code: exit.code });
    if (unhealthy && !this.paused) {
      this.setPaused(
        true,
        'dispatch-unhealthy: two executors in a row exited quickly without changing anything',
      );
      this.store.journal('dispatch-paused', { reason: 'dispatch-unhealthy' });
      this.events.paused(this.pauseReason!);
    }
    this.live.delete(h.task_id);
    this.exits.push({
      task_id: h.task_id,
      code: exit.code,
      signal: exit.signal,
      host: live.session?.host ?? 'orphan',
    });
    this.events.exited(h.task_id, exit);
    this.events.wake();
  }

  killAll(): void {
    for (const live of this.live.values()) live.session?.kill();
  }
}
