import type { HandoffOf } from '../../core/records/report.js';
import type { TurnEndNotice, WaitingTurn } from '../../core/tick/tick-input.js';
import type { AgentAdapter } from '../../agents/agent.js';
import { checkHookMessage } from '../../core/turns/hook-message.js';
import type { HookMessage, HookReply, LaneFacts } from '../../core/turns/hook-message.js';
import { openAttempt } from '../../core/records/kernel.js';
import type { KernelRecord } from '../../core/records/kernel.js';
import type { Clock } from '../../core/ports/clock.js';
import type { CoordinatorStorePort } from '../../core/ports/store-port.js';
import { recordSessionId, recordUsage, reworkKey } from '../../core/turns/turn.js';
import { subtractUsage } from '../../core/records/usage.js';
import type { Usage } from '../../core/records/usage.js';
import type { LaneSession } from '../../hosts/host.js';
import { HookChannel } from './hook-channel.js';
import { realpathSync } from 'node:fs';

const realPath = (path: string): string | null => {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
};

// The coordinator's side of agents' hooks: a message is checked against the lane's
// current attempt (core/hook-message.ts) and refused (journaled, nothing moves) unless
// it is that attempt's; a turn end is an event for the next tick (QA runs while the agent
// waits). The tick decides each verdict from the turns waiting (inFlight) and asks for it
// as an answer-turn effect (core/tick/effects.ts), carried out here (answer): the failing
// checks' output back into the same session (the hook's answer, or typed into the pane), or stop.

interface PendingTurn {
  attempt: number;
  qaRunsAtTurnEnd: number;
  /** Answers the waiting hook; null when the agent does not wait (Codex notify). */
  reply: ((reply: HookReply) => void) | null;
}

export interface AgentTurnsDeps {
  sessionOf(task: string): LaneSession | null;
  agentOf(task: string): AgentAdapter;
  /** A turn ended in a live session: an event for the tick. */
  turnEnded(notice: TurnEndNotice): void;
  /** The agent says it waits for the user (a permission prompt). */
  waiting(task: string, message: string | null): void;
  /** The time the kernel records a learnt session id at. */
  clock: Clock;
}

export class AgentTurns {
  private readonly channel: HookChannel;
  private readonly pending = new Map<string, PendingTurn>();
  /** Each live agent session's latest rework it has been given (core/turn.ts reworkKey). */
  private readonly sent = new Map<string, string>();
  /** The waiting turns as the last tick was told of them (inFlight). */
  private told = new Map<string, PendingTurn>();

  constructor(
    private readonly store: CoordinatorStorePort,
    private readonly deps: AgentTurnsDeps,
  ) {
    this.channel = new HookChannel(
      (message) => this.onMessage(message),
      (problem) => this.store.journal('hook-refused', { reason: 'malformed', problem }),
    );
  }

  get socketPath(): string | null {
    return this.channel.socketPath;
  }

  /** Opens the channel once (the journal names its socket). */
  async open(): Promise<void> {
    if (this.channel.socketPath) return;
    await this.channel.open(this.store.channelName());
    this.store.journal('hook-channel', { socket: this.channel.socketPath });
  }

  /**
   * The socket of one machine's lanes (forwarded to that machine): a message naming a lane
   * that is not on `machine` is refused there.
   */
  async openFor(machine: string): Promise<string> {
    await this.open();
    return this.channel.openFor(this.store.channelName(), machine, (message) => {
      const child = this.store.readRecord().children.find((c) => c.task_id === message.task);
      return (child?.machine ?? 'local') === machine
        ? null
        : `${message.task} is not a lane of machine ${machine}`;
    });
  }

  async close(): Promise<void> {
    for (const p of this.pending.values()) p.reply?.({ verdict: 'stop', why: 'lanes-stopped' });
    this.pending.clear();
    await this.channel.close();
  }

  /** Whether a turn of this lane waits for its verdict. */
  isWaiting(task: string): boolean {
    return this.pending.has(task);
  }

  /**
   * Every lane's run and kernel (a token is looked for in all of them); where it is and
   * whether its executor runs are read only for the lane the message names, the one the
   * check compares them with.
   */
  private laneFacts(task: string): Map<string, LaneFacts> {
    const lanes = new Map<string, LaneFacts>();
    for (const child of this.store.readRecord().children) {
      const read = this.store.readKernel(child.task_id);
      const named = child.task_id === task;
      lanes.set(child.task_id, {
        runId: child.state === 'enrolled' ? (child.lane?.run_id ?? null) : null,
        kernel: read.kind === 'ok' ? read.record : null,
        // (a lane on a machine: its path is the machine's, real already)
        path: named && child.lane ? (child.machine ? child.lane.path : realPath(child.lane.path)) : null,
        running: named && (this.deps.sessionOf(child.task_id)?.running ?? false),
      });
    }
    return lanes;
  }

  private async onMessage(message: HookMessage): Promise<HookReply> {
    const lanes = this.laneFacts(message.task);
    const check = checkHookMessage(message, lanes);
    if (!check.ok) {
      this.store.journal('hook-refused', {
        task: message.task,
        reason: check.reason,
        attempt: message.attempt,
        kind: message.kind,
      });
      return { verdict: 'refused', reason: check.reason };
    }
    let kernel = lanes.get(message.task)!.kernel!;
    const open = openAttempt(kernel)!;
    // (a turn end's session id is recorded by the tick, with the turn end: one write)
    if (message.kind !== 'turn-end' && message.session_id && open.session_id !== message.session_id) {
      kernel = recordSessionId(kernel, open.n, message.session_id, this.deps.clock.now().toISOString());
      this.store.writeKernel(kernel);
    }
    if (message.kind === 'session') {
      this.store.journal('agent-session', {
        task: message.task,
        attempt: open.n,
        session_id: message.session_id,
      });
      return { verdict: 'noted' };
    }
    if (message.kind === 'notification') {
      this.store.journal('agent-notification', { task: message.task, message: message.last_message });
      this.deps.waiting(message.task, message.last_message);
      return { verdict: 'noted' };
    }
    this.store.journal('turn-ended', {
      task: message.task,
      attempt: open.n,
      session_id: message.session_id,
    });
    if (message.usage) kernel = this.recordSpent(kernel, open.n, message.usage);
    this.pending.get(message.task)?.reply?.({ verdict: 'stop', why: 'superseded' });
    const waits = this.deps.agentOf(message.task).reworkBy === 'hook';
    return new Promise((resolve) => {
      this.pending.set(message.task, {
        attempt: open.n,
        qaRunsAtTurnEnd: kernel.qa_runs.length,
        reply: waits ? resolve : null,
      });
      if (!waits) resolve({ verdict: 'noted' });
      this.deps.turnEnded({ task_id: message.task, attempt: open.n, session_id: message.session_id ?? null });
    });
  }

  /** The session's running total at a turn end, into the attempt (and what it added, journalled). */
  private recordSpent(kernel: KernelRecord, n: number, usage: Usage): KernelRecord {
    const next = recordUsage(kernel, n, usage, 'session-total', this.deps.clock.now().toISOString());
    const before = kernel.attempts.find((a) => a.n === n)?.usage ?? null;
    const after = next.attempts.find((a) => a.n === n)?.usage ?? usage;
    this.store.writeKernel(next);
    this.store.journal('usage', { task: kernel.task_id, attempt: n, ...subtractUsage(after, before) });
    return next;
  }

  /** A live session started (or was found again) with what the kernel holds now. */
  launched(task: string, kernel: KernelRecord): void {
    this.sent.set(task, reworkKey(kernel));
  }

  forget(task: string): void {
    this.sent.delete(task);
  }

  /** What the tick decides the verdicts from (TickInput.inFlight). */
  inFlight(): { waitingTurns: WaitingTurn[]; reworkSent: { task_id: string; rework_key: string }[] } {
    this.told = new Map(this.pending);
    return {
      waitingTurns: [...this.pending].map(([task_id, t]) => ({
        task_id,
        attempt: t.attempt,
        qa_runs_at_turn_end: t.qaRunsAtTurnEnd,
      })),
      reworkSent: [...this.sent].map(([task_id, rework_key]) => ({ task_id, rework_key })),
    };
  }

  /**
   * Carries out an answer-turn effect: the waiting turn (the one the tick was told of) gets
   * its verdict, or an agent at its prompt gets the rework typed in.
   */
  answer(h: HandoffOf<'answer-turn'>): void {
    const task = h.task_id;
    if (h.attempt === null) {
      if (this.pending.has(task) || !this.sent.has(task)) return; // (a turn ended meanwhile)
      this.sent.set(task, h.rework_key ?? this.sent.get(task)!);
      typeInto(this.deps.sessionOf(task), h.feedback ?? '');
      this.store.journal('rework-sent', { task, attempt: this.lastAttempt(task), via: 'typing' });
      return;
    }
    const turn = this.pending.get(task);
    // (the turn the tick was told of: one that ended after it waits for the next tick)
    if (!turn || this.told.get(task) !== turn) return;
    this.pending.delete(task);
    if (h.rework_key !== null) this.sent.set(task, h.rework_key);
    if (h.verdict === 'continue') {
      const feedback = h.feedback ?? '';
      if (turn.reply) turn.reply({ verdict: 'continue', feedback });
      else typeInto(this.deps.sessionOf(task), feedback);
      this.store.journal('rework-sent', { task, attempt: turn.attempt, via: turn.reply ? 'hook' : 'typing' });
    } else {
      const why = h.why ?? 'not-running';
      turn.reply?.({ verdict: 'stop', why });
      this.store.journal('turn-answered', { task, attempt: turn.attempt, verdict: 'stop', why });
    }
  }

  private lastAttempt(task: string): number | null {
    const read = this.store.readKernel(task);
    return read.kind === 'ok' ? (read.record.attempts.at(-1)?.n ?? null) : null;
  }
}

/** Bracketed paste keeps a many-line instruction one message; Enter sends it. */
const PASTE_TO_ENTER_MS = 150;

function typeInto(session: LaneSession | null, text: string): void {
  if (!session?.running) return;
  session.write(`\x1b[200~${text}\x1b[201~`);
  setTimeout(() => session.write('\r'), PASTE_TO_ENTER_MS).unref();
}
