import type { AgentAdapter } from '../../../agents/agent.js';
import type { ExecutorProfile } from '../../../core/settings/config.js';
import { startAttempt } from '../../../core/records/kernel.js';
import type { KernelRecord } from '../../../core/records/kernel.js';
import type { PlanChild } from '../../../core/plan/plan.js';
import type { Clock } from '../../../core/ports/clock.js';
import type { CoordinatorStorePort } from '../../../core/ports/store-port.js';
import type { Handoff } from '../../../core/records/report.js';
import type { Host, LaneSession } from '../../../hosts/host.js';
import { attemptStart, launchSpec, prepareLaunch } from './agent-launch.js';
import type { PreparedLaunch } from './agent-launch.js';
import type { AgentTurns } from '../../turns/agent-turns.js';

// Starting one attempt of a child's executor: the launch prepared (prompt, argv, hook
// token), the hook channel opened when the agent reports its turns, the executor opened on
// the host, then the attempt in the kernel and the journal.

export interface AttemptContext {
  batchId: string;
  store: CoordinatorStorePort;
  host: Host;
  turns: AgentTurns;
  /** The lanes hook an agent runs (`node <bundle> hook`). */
  hookArgv: readonly string[];
  clock: Clock;
  /** Lanes on machines (absent: every lane local). */
  machines?: AttemptMachines | undefined;
}

/** What an attempt on a machine needs of it: its hook there, and the hook socket forwarded to it. */
export interface AttemptMachines {
  /** The machine of a lane path ("local" for the coordinator's). */
  machineOf(path: string): string;
  /** The hook an agent on `machine` runs (its side script's `hook`). */
  hookArgv(machine: string): readonly string[];
  /** Forwards the coordinator's socket `local` of that machine to the machine (once). */
  forwardHook(machine: string, local: string): Promise<void>;
}

export interface Executor {
  /** The executor profile's name. */
  name: string;
  profile: ExecutorProfile;
  agent: AgentAdapter;
}

export async function launchAttempt(
  ctx: AttemptContext,
  h: Extract<Handoff, { action: 'executor' }>,
  child: PlanChild,
  kernel: KernelRecord,
  { name, profile, agent }: Executor,
): Promise<{ session: LaneSession; attempt: number; launch: PreparedLaunch }> {
  const attempt = kernel.attempts.length + 1;
  const machine = ctx.machines?.machineOf(h.lane_path) ?? 'local';
  const launch = prepareLaunch({
    batchId: ctx.batchId,
    child,
    lanePath: h.lane_path,
    kernel,
    profile,
    agent,
    attempt,
    logDir: ctx.store.logDir(h.task_id),
    mode: ctx.host.capabilities.agents,
    hookArgv: machine === 'local' ? ctx.hookArgv : ctx.machines!.hookArgv(machine),
  });
  if (launch.token) await ctx.turns.open();
  if (launch.token && machine !== 'local')
    await ctx.machines!.forwardHook(machine, await ctx.turns.openFor(machine));
  const spec = launchSpec(launch, h, ctx.batchId, profile, ctx.turns.socketPath);
  const session = await ctx.host.open(spec);
  const started = startAttempt(kernel, attemptStart(launch, session), ctx.clock.now().toISOString());
  ctx.store.writeKernel(started);
  if (launch.token) ctx.turns.launched(h.task_id, started); // (its prompt carries the kernel's rework)
  ctx.store.journal('executor-spawned', {
    task: h.task_id,
    attempt,
    host: session.host,
    executor: name,
    ...(agent.sessions ? { agent: agent.name, session_id: launch.sessionId, resumed: launch.resumed } : {}),
  });
  return { session, attempt, launch };
}
