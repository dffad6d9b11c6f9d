import type { ChildRecord } from '../../core/records/record.js';
import { agentOf } from '../../agents/agents.js';
import type { Config } from '../../core/settings/config.js';
import { nextExecutorStep } from '../../core/rules/executor-step.js';
import type { KernelRecord } from '../../core/records/kernel.js';
import type { Plan, PlanChild } from '../../core/plan/plan.js';
import type { Clock } from '../../core/ports/clock.js';
import type { CoordinatorStorePort } from '../../core/ports/store-port.js';
import type { WorktreePort } from '../../core/ports/worktree-port.js';
import type { HandoffOf } from '../../core/records/report.js';
import type { InFlight } from '../../core/tick/tick-input.js';
import { readExitStatus } from '../../hosts/exit-status.js';
import type { ExitInfo, Host, LaneSession } from '../../hosts/host.js';
import { crashPoint } from '../../process/crash-points.js';
import { launchAttempt, readAgentOutput, type AttemptMachines } from './launch/index.js';
import { AgentTurns } from '../turns/agent-turns.js';
import { SessionClosing } from './session-closing.js';
import { ExecutorExits } from './executor-exit.js';
import { ExecutorProfiles } from './executor-profiles.js';
import { Reattach } from './reattach.js';
import type { Live, RunnerEvents } from './live.js';
import { ExitQueue } from './exit-queue.js';
import { HeldFailure } from '../lanes/held-failure.js';
import type { LaneWatch } from './lane-watch.js';
import { runnerWatch } from './runner-watch.js';
import { stopRecordedExecutor, stopSession } from './stop-executors.js';
import { interruptExecutors } from './interrupt.js';

// The parent's executor side: one executor per executor handoff that has none running,
// its exit recorded for the next tick, and an executor from before a restart found again
// (its status file, its pid, or its Herdr tab) instead of being started twice.

type ExecutorHandoff = HandoffOf<'executor'>;

export type { Live, RunnerEvents } from './live.js';

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
  machines?: AttemptMachines | undefined; // (lanes on machines: their hooks there)
}

export class ExecutorRunner {
  readonly live = new Map<string, Live>();
  /** The exits on their way to the tick. */
  readonly queue = new ExitQueue();
  readonly watch: LaneWatch;
  readonly turns: AgentTurns;
  private readonly profiles: ExecutorProfiles;
  private readonly exits: ExecutorExits;
  /** Sessions being closed (close-session effects). */
  private readonly closing = new SessionClosing(() => ({
    live: this.live,
    store: this.store,
    clock: this.options.clock,
    quitKeysOf: (task: string) =>
      this.host.capabilities.agents === 'headless' ? null : agentOf(this.profiles.of(task).profile).quitKeys,
    forget: (task: string) => {
      this.watch.forget(task);
      this.turns.forget(task);
    },
  }));
  /** Attempts from before a restart, found again (reattach.ts). */
  private readonly reattach: Reattach;
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
    this.profiles = new ExecutorProfiles(config, plan);
    this.reattach = new Reattach({
      host,
      store,
      clock: options.clock,
      queue: this.queue,
      live: this.live,
      events,
      track: (h, session, statusPath) => this.track(h, session, statusPath),
      watchLane: (h, session) => this.watchLane(h, session),
      forgetWatch: (task) => this.watch.forget(task),
      onExit: (h, live, exit) => this.onExit(h, live, exit),
    });
    this.exits = new ExecutorExits({
      store,
      clock: options.clock,
      worktrees: options.worktrees,
      queue: this.queue,
      endAttempt: options.endAttempt,
      paused: () => this.paused,
      pause: (why) => {
        this.setPaused(true, why);
        this.store.journal('dispatch-paused', { reason: 'dispatch-unhealthy' });
        this.events.paused(why);
      },
      exited: (task, exit) => this.events.exited(task, exit),
      wake: () => this.events.wake(),
    });
    this.turns = new AgentTurns(store, {
      sessionOf: (task) => this.sessionOf(task),
      agentOf: (task) => agentOf(this.profiles.of(task).profile),
      turnEnded: (notice) => {
        this.queue.pushTurnEnd(notice);
        this.events.wake();
      },
      waiting: (task) => this.watch.markWaiting(task),
      clock: this.options.clock,
    });
    this.watch = runnerWatch({
      ...{ config, store, clock: options.clock, worktrees: options.worktrees, health: events.health },
      plan: () => this.plan,
      profileOf: (task) => this.profiles.of(task),
    });
  }

  setPlan(plan: Plan): void {
    this.plan = plan;
    this.profiles.setPlan(plan);
  }

  setPaused(paused: boolean, why: string | null): void {
    this.paused = paused;
    this.pauseReason = paused ? why : null;
    if (!paused) this.exits.resumed();
  }

  sessionOf(task: string): LaneSession | null {
    return this.live.get(task)?.session ?? null;
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
      const found = await this.reattach.findAgain(h, step.attempt);
      if (found !== 'lost') return found === 'ended';
      kernel = this.reattach.abandon(h.task_id, kernel, step.attempt.n);
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
      this.failure.holdUnlessAway(error); // (a machine away: started again once it answers)
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
    const { name, profile } = this.profiles.of(h.task_id);
    const agent = agentOf(profile);
    const { batchId, store, host, turns, hookArgv, options } = this;
    const ctx = { batchId, store, host, turns, hookArgv, clock: options.clock, machines: options.machines };
    const { session, attempt, launch } = await launchAttempt(ctx, h, child, kernel, { name, profile, agent });
    delete live.launching;
    this.track(h, session, launch.statusPath, live);
    readAgentOutput(session, agent, store, h.task_id, attempt, options.clock, launch.sessionId === null);
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

  private watchLane(h: ExecutorHandoff, session: LaneSession | null): void {
    const lane = this.store.readRecord().children.find((c) => c.task_id === h.task_id)?.lane;
    if (lane) this.watch.watch(h.task_id, session, lane.path, lane.base_head);
  }

  private async onExit(h: ExecutorHandoff, live: Live, exit: ExitInfo): Promise<void> {
    if (live.closing) return; // closed by lanes after its work was integrated (closeSession)
    if (this.interrupting) return; // (the user's interrupt: see interrupt)
    this.watch.forget(h.task_id);
    this.turns.forget(h.task_id);
    const ended = {
      task: h.task_id,
      startedAt: live.startedAt,
      watchedFromStart: live.session !== null,
      host: live.session?.host ?? 'orphan',
      stoppedByLanes: this.stopping.delete(h.task_id),
      exit,
    };
    await this.exits.ended(ended, () => this.live.delete(h.task_id));
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

  /** What the tick asks answer-turn and close-session effects from (TickInput.inFlight). */
  inFlight(): InFlight {
    const sessions = [...this.live].filter(([, l]) => l.session?.running && !l.closing).map(([t]) => t);
    return { ...this.turns.inFlight(), sessions };
  }

  /** Carries out a close-session effect beside the loop (sessionsClosed waits for it). */
  closeSession(task: string): void {
    this.closing.close(task);
  }

  /** Resolves once no session is being closed. */
  sessionsClosed(): Promise<void> {
    return this.closing.settled();
  }

  async dispose(): Promise<void> {
    await this.launched();
    await this.interrupting;
    await this.queue.ended();
    await this.sessionsClosed();
    this.throwFailure(); // (one the loop did not meet before it ended)
    await this.turns.close();
  }

  private interrupting: Promise<unknown> | null = null;

  /** The user's interrupt (Ctrl-C, SIGTERM): every executor stopped, nothing counted (interrupt.ts). */
  interrupt(): Promise<unknown> {
    const { live, store, watch, turns } = this;
    this.interrupting ??= interruptExecutors({ live, store, watch, turns, clock: this.options.clock });
    return this.interrupting;
  }

  killAll(): void {
    for (const live of this.live.values()) {
      if (live.launching) void live.launching.then(() => live.session?.kill());
      else live.session?.kill();
    }
  }
}
