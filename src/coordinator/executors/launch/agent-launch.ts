import { randomBytes, randomUUID } from 'node:crypto';
import type { AgentAdapter, AgentMode } from '../../../agents/agent.js';
import type { ExecutorProfile } from '../../../core/settings/config.js';
import { tokenDigest } from '../../../core/turns/hook-message.js';
import type { AttemptStart, KernelRecord } from '../../../core/records/kernel.js';
import type { PlanChild } from '../../../core/plan/plan.js';
import type { Clock } from '../../../core/ports/clock.js';
import type { StorePort } from '../../../core/ports/store-port.js';
import { subtractUsage } from '../../../core/records/usage.js';
import {
  recordSessionId,
  recordUsage,
  resumeInstruction,
  sessionToResume,
} from '../../../core/turns/turn.js';
import type { LaneSession, LaunchSpec } from '../../../hosts/host.js';
import { processStartTime } from '../../../process/process-info.js';
import { attemptFiles, buildPrompt, fillArgv, promptIndexOf, writePromptFile } from './executor-launch.js';

// One attempt's launch through its agent adapter: the prompt (or, for an agent that had a
// conversation, the instruction to continue it), the argv the adapter builds for the
// mode, the hook token, and the host's launch spec.

export interface PreparedLaunch {
  lanePath: string;
  argv: string[];
  promptFile: string;
  statusPath: string;
  logPath: string;
  attempt: number;
  sessionId: string | null;
  resumed: boolean;
  /** The attempt's secret for the hook channel; null when its turns do not come from a hook. */
  token: string | null;
  renderLine: ((line: string) => string[]) | null;
}

export function prepareLaunch(input: {
  batchId: string;
  child: PlanChild;
  lanePath: string;
  kernel: KernelRecord;
  profile: ExecutorProfile;
  agent: AgentAdapter;
  attempt: number;
  logDir: string;
  mode: AgentMode;
  hookArgv: readonly string[];
}): PreparedLaunch {
  const { agent, attempt, kernel } = input;
  // An agent continues its own conversation when it had one (a rework, a relaunch).
  const resumeId = agent.sessions ? sessionToResume(kernel) : null;
  const prompt = resumeId
    ? resumeInstruction(kernel)
    : buildPrompt({
        batchId: input.batchId,
        child: input.child,
        lanePath: input.lanePath,
        attempt,
        reworkFeedback: kernel.rework_feedback,
      });
  const promptFile = writePromptFile(input.logDir, attempt, prompt);
  const argv = fillArgv(input.profile, {
    prompt,
    prompt_file: promptFile,
    task: input.child.id,
    lane: input.lanePath,
    run: input.child.run ?? '',
    // (the confirmed plan holds each child's resolved model and effort: src/cli/confirm.ts)
    model: input.child.model,
    effort: input.child.effort,
  });
  const launch = agent.launch({
    argv,
    // Where the prompt is in the filled argv: an unset option before it drops out with its value.
    promptIndex: promptIndexOf(input.profile.argv) === null ? null : argv.lastIndexOf(prompt),
    mode: input.mode,
    resumeSessionId: resumeId,
    newSessionId: randomUUID(),
    hookArgv: input.hookArgv,
    lanePath: input.lanePath,
  });
  return {
    lanePath: input.lanePath,
    argv: launch.argv,
    promptFile,
    ...attemptFiles(input.logDir, attempt),
    attempt,
    sessionId: launch.sessionId,
    resumed: resumeId !== null,
    token: launch.hookTurns ? randomBytes(24).toString('hex') : null,
    renderLine: input.mode === 'headless' && agent.sessions ? (l) => agent.renderLine(l) : null,
  };
}

export function launchSpec(
  launch: PreparedLaunch,
  h: { task_id: string; run_id: string },
  batchId: string,
  profile: ExecutorProfile,
  socketPath: string | null,
): LaunchSpec {
  const ids = { taskId: h.task_id, runId: h.run_id, batchId, profile, socketPath };
  const hook: Record<string, string> =
    launch.token && ids.socketPath
      ? { LANES_HOOK_SOCKET: ids.socketPath, LANES_HOOK_TOKEN: launch.token }
      : {};
  return {
    taskId: ids.taskId,
    runId: ids.runId,
    attempt: launch.attempt,
    cwd: launch.lanePath,
    argv: launch.argv,
    env: {
      ...ids.profile.env,
      LANES_BATCH: ids.batchId,
      LANES_TASK: ids.taskId,
      LANES_RUN: ids.runId,
      LANES_LANE: launch.lanePath,
      LANES_ATTEMPT: String(launch.attempt),
      LANES_PROMPT_FILE: launch.promptFile,
      ...hook,
    },
    logPath: launch.logPath,
    statusPath: launch.statusPath,
    ...(launch.renderLine ? { renderLine: launch.renderLine } : {}),
  };
}

/**
 * What lanes reads of an agent's headless output as it comes: its session id when it names
 * it only once it runs (Codex's thread id), and what it reports it spent (its usage events,
 * added to the attempt and journalled: the lane list's tokens, live). A command reports nothing.
 */
export function readAgentOutput(
  session: LaneSession,
  agent: AgentAdapter,
  store: StorePort,
  task: string,
  attempt: number,
  clock: Clock,
  learnSession: boolean,
): void {
  if (!agent.sessions) return; // (a plain command reports nothing)
  const update = (change: (k: KernelRecord, now: string) => KernelRecord) => {
    const read = store.readKernel(task);
    if (read.kind === 'ok') store.writeKernel(change(read.record, clock.now().toISOString()));
  };
  let partial = '';
  let needId = learnSession;
  session.onOutput((chunk) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      const id = needId ? agent.sessionIdFromOutput(line) : null;
      if (id) {
        needId = false;
        update((k, now) => recordSessionId(k, attempt, id, now));
      }
      const usage = agent.usageFromOutput(line);
      if (!usage) continue;
      let spent = usage;
      update((k, now) => {
        const next = recordUsage(k, attempt, usage, agent.usageIs, now);
        const before = k.attempts.find((a) => a.n === attempt)?.usage ?? null;
        const after = next.attempts.find((a) => a.n === attempt)?.usage ?? usage;
        spent = subtractUsage(after, before); // (what this report added: the journal's sums are the lane's)
        return next;
      });
      store.journal('usage', { task, attempt, ...spent });
    }
  });
}

/** What the kernel records of a launched attempt (the token only as its digest). */
export function attemptStart(launch: PreparedLaunch, session: LaneSession): AttemptStart {
  return {
    host: session.host,
    paneId: session.paneId,
    pid: session.pid,
    pidStart: session.pid ? processStartTime(session.pid) : null,
    statusPath: launch.statusPath,
    sessionId: launch.sessionId,
    resumed: launch.resumed,
    hookTokenSha256: launch.token ? tokenDigest(launch.token) : null,
  };
}
