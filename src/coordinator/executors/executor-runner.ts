import type { ChildRecord } from '../../core/records/record.js';
import { agentOf, promptPatternsOf } from '../../agents/agents.js';
import { resolveSettings } from '../../core/settings/batch-settings.js';
import { executorProfiles } from '../../core/settings/config.js';
import type { Config, ExecutorProfile } from '../../core/settings/config.js';
import { judgeExecutorEnd } from '../../core/rules/dispatch-health.js';
import { nextExecutorStep } from '../../core/rules/executor-step.js';
import { abandonAttempt } from '../../core/records/kernel.js';
import type { Attempt, KernelRecord } from '../../core/records/kernel.js';
import type { Plan, PlanChild } from '../../core/plan/plan.js';
import type { Clock } from '../../core/ports/clock.js';
import type { CoordinatorStorePort } from '../../core/ports/store-port.js';
import type { WorktreePort } from '../../core/ports/worktree-port.js';
import type { Handoff } from '../../core/records/report.js';
import { readExitStatus } from '../../hosts/exit-status.js';
import { lookForAttempt, processGone } from './executor-recovery.js';
import type { ExitInfo, Host, LaneSession } from '../../hosts/host.js';
import { crashPoint } from '../../process/crash-points.js';
import { learnSessionId } from './agent-launch.js';
import { launchAttempt } from './attempt-launch.js';
import { AgentTurns } from '../turns/agent-turns.js';
import { closeFinished } from '../turns/session-close.js';
import { ExitQueue } from './exit-queue.js';
import { HeldFailure } from '../lanes/held-failure.js';
import { LaneWatch } from './lane-watch.js';
import { stopRecordedExecutor, stopSession } from './stop-executors.js';
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

export interface Live {
  /** Null while `launching`, and for an executor from before a restart (watched by pid). */
  session: LaneSession | null;
  runId: string;
  startedAt: number;
  /** Set while the executor is being started (ensure): resolves once `session` is set, or it failed. */
  launching?: Promise<void>;
  /** lanes is closing the session (its work is integrated): its end is no executor exit. */
  closing?: boolean;
}

export interface RunnerOptions {
  /** What attempts are stamped with and run times measured by (the tick's clock). */
  clock: Clock;
  worktrees: WorktreePort;
  /** The lanes hook an agent runs (`node <bundle> hook`); the kind is appended by the adapter. */
  hookArgv?: readonly string[];
  /**
   * Ends an exited attempt beside the loop (core/attempt-end.ts endAttempt): true when the
   * kernel now records the exit, its QA and its delivery (false: the tick does it all).
   */
  endAttempt: (child: ChildRecord, exit: ExitInfo & { host: string }) => Promise<boolean>;
}

export class ExecutorRunner {
  readonly live = new Map<string, Live>();
  /** The exits on their way to the tick. */
  readonly queue = new ExitQueue();
  readonly watch: LaneWatch;
  /** Suspect exits in a row (src/core/dispatch-health.ts). */
  private suspectStreak = 0;
  readonly turns: AgentTurns;
  private readonly hookArgv: readonly string[];
  paused = false;
  pauseReason: string | null = null;

  constructor(
    private readonly batchId: string,
    private readonly store: CoordinatorStorePort,
    private readonly config: Config,
    private readonly host: Host,
    private plan: Plan,
    private readonly events: RunnerEvents,
    private readonly options: RunnerOptions,
  ) {
    this.hookArgv = options.hookArgv ?? [process.execPath, process.argv[1] ?? 'lanes', 'hook'];
    this.turns = new AgentTurns(store, {
      sessionOf: (task) => this.sessionOf(task),
      agentOf: (task) => agentOf(this.profileOf(task).profile),
      turnEnded: (task) => {
        this.queue.push({ task_id: task, code: null, signal: null, turn_end: true });
        this.events.wake();
      },
      waiting: (task) => this.watch.markWaiting(task),
      clock: this.options.clock,
    });
    this.watch = new LaneWatch({
      scopeOf: (task) => this.plan.children.find((c) => c.id === task)?.scope ?? ['**'],
      promptPatternsOf: (task) => promptPatternsOf(this.profileOf(task).profile),
      animated: (task) => agentOf(this.profileOf(task).profile).name !== 'command',
      stallTimeoutMs: config.stall_timeout_ms,
      clock: this.options.clock,
      worktrees: options.worktrees,
      onChange: (task, health, what) => {
        if (what === 'stalled') this.store.journal('stalled', { task, quiet_ms: config.stall_timeout_ms });
        this.events.health(task, health, what);
      },
    });
  }

  setPlan(plan: Plan): void {
    this.plan = plan;
    this.profiles.clear();
  }

  setPaused(paused: boolean, why: string | null): void {
    this.paused = paused;
    this.pauseReason = paused ? why : null;
    if (!paused) this.suspectStreak = 0;
  }

  sessionOf(task: string): LaneSession | null {
    return this.live.get(task)?.session ?? null;
  }

  /**
   * Each child's executor profile, resolved once per plan: the lane watch asks on every
   * chunk of output, and resolving means every child's preferences.
   */
  private readonly profiles = new Map<string, { name: string; profile: ExecutorProfile }>();

  private profileOf(task: string): { name: string; profile: ExecutorProfile } {
    let found = this.profiles.get(task);
    if (!found) {
      const name = resolveSettings(this.plan, this.config).executors[task] as string;
      found = { name, profile: executorProfiles(this.config)[name]! };
      this.profiles.set(task, found);
    }
    return found;
  }

  /** Acts on an executor handoff. Returns true when an exit was queued (the loop should tick again). */
  async ensure(h: ExecutorHandoff): Promise<boolean> {
    if (this.interrupting) return false; // (the user interrupted the run: nothing starts)
    const child = this.plan.children.find((c) => c.id === h.task_id);
    const read = this.store.readKernel(h.task_id);
    let kernel = read.kind === 'ok' ? read.record : null;
    const facts = () => ({
      handoff: h,
      liveRunId: this.live.get(h.task_id)?.runId ?? null,
      exitQueued: this.queue.queued(h.task_id),
      kernel,
      paused: this.paused,
      inPlan: child !== undefined,
    });
    let step = nextExecutorStep(facts());
    if (step.kind === 'find-again' && kernel) {
      const found = await this.findAgain(h, step.attempt);
      if (found !== 'lost') return found === 'ended';
      kernel = this.abandon(h.task_id, kernel, step.attempt.n);
      step = nextExecutorStep(facts());
    }
    if (step.kind !== 'start' || !child || !kernel || this.failure.held) return false;
    // Started beside the loop: the loop ticks on while the host opens it (the process
    // helper forks it, a Herdr tab opens), and the child counts as live from now on, so
    // no handoff starts it twice. A stop or a kill waits for the start (stop, killAll).
    const live: Live = { session: null, runId: h.run_id, startedAt: this.options.clock.now().getTime() };
    live.launching = this.launch(h, child, kernel, live).catch((error: unknown) => {
      // (one that started and failed after: it runs, and stays live)
      if (this.live.get(h.task_id) === live && live.session === null) this.live.delete(h.task_id);
      this.failure.hold(error);
      this.events.wake();
    });
    this.live.set(h.task_id, live);
    return false;
  }

  private async launch(
    h: ExecutorHandoff,
    child: PlanChild,
    kernel: KernelRecord,
    live: Live,
  ): Promise<void> {
    const { name, profile } = this.profileOf(h.task_id);
    const agent = agentOf(profile);
    const { batchId, store, host, turns, hookArgv, options } = this;
    const ctx = { batchId, store, host, turns, hookArgv, clock: options.clock };
    const { session, attempt, launch } = await launchAttempt(ctx, h, child, kernel, { name, profile, agent });
    delete live.launching;
    this.track(h, session, launch.statusPath, live);
    if (launch.sessionId === null) learnSessionId(session, agent, store, h.task_id, attempt, options.clock);
    this.events.launched(h.task_id, attempt, session);
  }

  /** A start that failed beside the loop (ensure): thrown in the loop, as when it was awaited there. */
  private readonly failure = new HeldFailure();

  throwFailure(): void {
    this.failure.throwHeld();
  }

  /** Resolves once no executor is being started. */
  async launched(): Promise<void> {
    await Promise.all([...this.live.values()].map((l) => l.launching));
  }

  /** An attempt started before lanes restarted: ended (status file), still running (pid or tab), or lost. */
  private async findAgain(h: ExecutorHandoff, open: Attempt): Promise<'ended' | 'running' | 'lost'> {
    const found = await lookForAttempt(this.host, open, this.store.logDir(h.task_id), h);
    const task = h.task_id;
    if (found.kind === 'ended') {
      this.queue.push({ task_id: task, code: found.exit.code, signal: found.exit.signal, host: open.host });
      this.store.journal('executor-reattached', {
        task,
        attempt: open.n,
        ended: true,
        code: found.exit.code,
      });
      return 'ended';
    }
    if (found.kind === 'pane') {
      this.track(h, found.session, open.status_path);
      this.store.journal('executor-reattached', { task, attempt: open.n, pane: open.pane_id });
      this.events.launched(task, open.n, found.session);
      return 'running';
    }
    if (found.kind === 'pid') {
      this.watchOrphan(h, open);
      this.store.journal('executor-reattached', { task, attempt: open.n, pid: open.pid });
      return 'running';
    }
    return 'lost';
  }

  private track(
    h: ExecutorHandoff,
    session: LaneSession,
    statusPath: string | null,
    live: Live = { session, runId: h.run_id, startedAt: this.options.clock.now().getTime() },
  ): void {
    live.session = session;
    this.live.set(h.task_id, live);
    this.watchLane(h, session);
    void session.exited.then(async (exit) => {
      crashPoint('after-executor-exit', h.task_id);
      await this.onExit(h, live, (statusPath ? readExitStatus(statusPath) : null) ?? exit);
    });
  }

  /** An executor from before a restart that still runs: wait for it through its pid and status file. */
  private watchOrphan(h: ExecutorHandoff, open: Attempt): void {
    const live: Live = { session: null, runId: h.run_id, startedAt: this.options.clock.now().getTime() };
    this.live.set(h.task_id, live);
    this.watchLane(h, null);
    void processGone(open.pid!, open.pid_start).then(() => {
      const status = open.status_path ? readExitStatus(open.status_path) : null;
      if (!status && open.session_id) return this.relaunchLost(h, open);
      void this.onExit(h, live, status ?? { code: null, signal: 'lost' });
    });
  }

  /**
   * An agent from before a restart vanished mid-turn (no exit status): no QA (a crash is
   * no QA failure); the next tick relaunches it continuing the same conversation.
   */
  private relaunchLost(h: ExecutorHandoff, open: Attempt): void {
    this.watch.forget(h.task_id);
    this.live.delete(h.task_id);
    const read = this.store.readKernel(h.task_id);
    if (read.kind === 'ok') this.abandon(h.task_id, read.record, open.n);
    this.events.wake();
  }

  private abandon(task: string, kernel: KernelRecord, attempt: number): KernelRecord {
    const next = abandonAttempt(kernel, this.options.clock.now().toISOString());
    this.store.writeKernel(next);
    this.store.journal('executor-relaunched', { task, lost_attempt: attempt });
    return next;
  }

  private watchLane(h: ExecutorHandoff, session: LaneSession | null): void {
    const lane = this.store.readRecord().children.find((c) => c.task_id === h.task_id)?.lane;
    if (lane) this.watch.watch(h.task_id, session, lane.path, lane.base_head);
  }

  private async onExit(h: ExecutorHandoff, live: Live, exit: ExitInfo): Promise<void> {
    if (live.closing) return; // closed by lanes after its work was integrated (closeFinished)
    if (this.interrupting) return; // (the user's interrupt: see interrupt)
    this.watch.forget(h.task_id);
    this.turns.forget(h.task_id);
    const ranFor = this.options.clock.now().getTime() - live.startedAt;
    const child = this.store.readRecord().children.find((c) => c.task_id === h.task_id);
    const lane = child?.lane;
    const stoppedByLanes = this.stopping.delete(h.task_id);
    // (not read for an executor lanes stopped: its lane is going, and the tick has its exit)
    const atExit =
      lane && !stoppedByLanes ? await this.options.worktrees.changedAtExit(lane.path, lane.base_head) : null;
    const changed = atExit === null || atExit.length > 0;
    // (an executor from before a restart ran for longer than lanes has seen: not a quick exit)
    const end = {
      ranForMs: ranFor,
      laneChanged: changed,
      watchedFromStart: live.session !== null,
      stoppedByLanes,
    };
    const judged = judgeExecutorEnd(this.suspectStreak, end, this.paused);
    this.suspectStreak = judged.suspectStreak;
    if (judged.suspect)
      this.store.journal('suspect-dispatch', { task: h.task_id, ran_ms: ranFor, code: exit.code });
    if (judged.pause) {
      this.setPaused(true, judged.pause);
      this.store.journal('dispatch-paused', { reason: 'dispatch-unhealthy' });
      this.events.paused(judged.pause);
    }
    const host = live.session?.host ?? 'orphan';
    this.events.exited(h.task_id, exit); // (the screen shows it ended while its QA runs)
    // Left to the tick: an executor lanes stopped (a drop, a cancel: its lane is going), and
    // a child whose turn end the tick has in hand or waiting (both would run QA in the lane).
    const tickHasIt = this.queue.tickHas(h.task_id);
    const ending =
      stoppedByLanes || tickHasIt || !child ? undefined : this.options.endAttempt(child, { ...exit, host });
    // A failure there leaves the exit to the tick, which does the same work again (and
    // meets the same error, if it lasts, where every tick error goes).
    const recorded = ending ? await this.queue.endBeside(h.task_id, ending) : false;
    // (live until here: no executor handoff starts this lane again while its exit is ended)
    this.live.delete(h.task_id);
    this.queue.push({ task_id: h.task_id, code: exit.code, signal: exit.signal, host, recorded });
    this.events.wake();
  }

  /** Executors stopped on purpose (drop, cancel): their exit says nothing of dispatch health. */
  private readonly stopping = new Set<string>();

  /** Stops a lane's executor (drop, cancel) and waits until it has exited. */
  async stop(task: string): Promise<void> {
    await this.live.get(task)?.launching;
    const live = this.live.get(task);
    if (live) this.stopping.add(task);
    if (live?.session) return stopSession(live.session);
    if (live) await stopRecordedExecutor(this.store.readKernel(task));
  }

  /**
   * After every tick: turns waiting for a verdict get it, and the sessions of lanes whose
   * work is integrated are closed (before their lanes are released).
   */
  async afterTick(children: readonly ChildRecord[]): Promise<void> {
    this.turns.answer(children);
    await closeFinished({
      children,
      live: this.live,
      store: this.store,
      clock: this.options.clock,
      quitKeysOf: (task) =>
        this.host.name === 'headless' ? null : agentOf(this.profileOf(task).profile).quitKeys,
      forget: (task) => {
        this.watch.forget(task);
        this.turns.forget(task);
      },
    });
  }

  async dispose(): Promise<void> {
    await this.launched();
    await this.interrupting;
    await this.queue.ended();
    this.throwFailure(); // (one the loop did not meet before it ended)
    await this.turns.close();
  }

  private interrupting: Promise<unknown> | null = null;

  /**
   * The user's interrupt (Ctrl-C, SIGTERM; issue 26): every executor is stopped and its
   * end is no exit: no QA, no quick-exit streak, no pause. Its attempt is closed as lost,
   * so a resume starts it afresh. Exits that came before go on as usual.
   */
  interrupt(): Promise<unknown> {
    this.interrupting ??= Promise.all(
      [...this.live.entries()].map(async ([task, live]) => {
        await live.launching;
        if (live.session?.running) await stopSession(live.session);
        else if (!live.session) await stopRecordedExecutor(this.store.readKernel(task));
        if (this.live.get(task) !== live) return; // (its exit was on its way already)
        this.watch.forget(task);
        this.turns.forget(task);
        this.live.delete(task);
        const read = this.store.readKernel(task);
        if (read.kind === 'ok' && read.record.attempts.at(-1)?.ended_at === null) {
          this.store.writeKernel(abandonAttempt(read.record, this.options.clock.now().toISOString()));
          this.store.journal('executor-interrupted', { task, attempt: read.record.attempts.length });
        }
      }),
    );
    return this.interrupting;
  }

  killAll(): void {
    for (const live of this.live.values()) {
      if (live.launching) void live.launching.then(() => live.session?.kill());
      else live.session?.kill();
    }
  }
}
