import type { ChildRecord } from '../../core/records/record.js';
import type { AgentAdapter } from '../../agents/agent.js';
import { checkHookMessage } from '../../core/turns/hook-message.js';
import type { HookMessage, HookReply, LaneFacts } from '../../core/turns/hook-message.js';
import { openAttempt } from '../../core/records/kernel.js';
import type { KernelRecord } from '../../core/records/kernel.js';
import type { Clock } from '../../core/ports/clock.js';
import type { CoordinatorStorePort } from '../../core/ports/store-port.js';
import { recordSessionId, reworkKey, reworkToType, turnVerdict } from '../../core/turns/turn.js';
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
// it is that attempt's; a turn end queues QA for the next tick while the agent waits;
// after each tick the waiting turns get their verdict (core/turn.ts): the failing checks'
// output back into the same session (the hook's answer, or typed into the pane), or stop.

interface PendingTurn {
  attempt: number;
  qaRunsAtTurnEnd: number;
  /** Answers the waiting hook; null when the agent does not wait (Codex notify). */
  reply: ((reply: HookReply) => void) | null;
}

export interface AgentTurnsDeps {
  sessionOf(task: string): LaneSession | null;
  agentOf(task: string): AgentAdapter;
  /** A turn ended in a live session: queue it for the tick. */
  turnEnded(task: string): void;
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

  async close(): Promise<void> {
    for (const p of this.pending.values()) p.reply?.({ verdict: 'stop', why: 'lanes-stopped' });
    this.pending.clear();
    await this.channel.close();
  }

  /** Whether a turn of this lane waits for its verdict. */
  isWaiting(task: string): boolean {
    return this.pending.has(task);
  }

  private laneFacts(): Map<string, LaneFacts> {
    const lanes = new Map<string, LaneFacts>();
    for (const child of this.store.readRecord().children) {
      const read = this.store.readKernel(child.task_id);
      lanes.set(child.task_id, {
        runId: child.state === 'enrolled' ? (child.lane?.run_id ?? null) : null,
        kernel: read.kind === 'ok' ? read.record : null,
        path: child.lane ? realPath(child.lane.path) : null,
        running: this.deps.sessionOf(child.task_id)?.running ?? false,
      });
    }
    return lanes;
  }

  private async onMessage(message: HookMessage): Promise<HookReply> {
    const lanes = this.laneFacts();
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
    if (message.session_id && open.session_id !== message.session_id) {
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
    this.pending.get(message.task)?.reply?.({ verdict: 'stop', why: 'superseded' });
    const waits = this.deps.agentOf(message.task).reworkBy === 'hook';
    return new Promise((resolve) => {
      this.pending.set(message.task, {
        attempt: open.n,
        qaRunsAtTurnEnd: kernel.qa_runs.length,
        reply: waits ? resolve : null,
      });
      if (!waits) resolve({ verdict: 'noted' });
      this.deps.turnEnded(message.task);
    });
  }

  /** A live session started (or was found again) with what the kernel holds now. */
  launched(task: string, kernel: KernelRecord): void {
    this.sent.set(task, reworkKey(kernel));
  }

  forget(task: string): void {
    this.sent.delete(task);
  }

  /**
   * After a tick: every waiting turn whose QA has run gets its verdict; an agent waiting
   * at its prompt with no turn pending gets a new rework typed in (a review rejection).
   */
  answer(children?: readonly ChildRecord[]): void {
    if (this.pending.size === 0 && this.sent.size === 0) return;
    const known = children ?? this.store.readRecord().children;
    for (const [task, key] of this.sent) {
      if (this.pending.has(task)) continue;
      const child = known.find((c) => c.task_id === task);
      const read = this.store.readKernel(task);
      if (!child || read.kind !== 'ok') continue;
      const text = reworkToType(read.record, child.state, key);
      if (text === null) continue;
      this.sent.set(task, reworkKey(read.record));
      typeInto(this.deps.sessionOf(task), text);
      this.store.journal('rework-sent', {
        task,
        attempt: read.record.attempts.at(-1)?.n ?? null,
        via: 'typing',
      });
    }
    for (const [task, turn] of [...this.pending]) {
      const child = known.find((c) => c.task_id === task);
      const read = this.store.readKernel(task);
      const verdict =
        child && read.kind === 'ok'
          ? turnVerdict({
              kernel: read.record,
              childState: child.state,
              qaRunsAtTurnEnd: turn.qaRunsAtTurnEnd,
            })
          : ({ kind: 'stop', why: 'not-running' } as const);
      if (verdict.kind === 'pending') continue;
      this.pending.delete(task);
      if (read.kind === 'ok') this.sent.set(task, reworkKey(read.record));
      if (verdict.kind === 'continue') {
        if (turn.reply) turn.reply({ verdict: 'continue', feedback: verdict.feedback });
        else typeInto(this.deps.sessionOf(task), verdict.feedback);
        this.store.journal('rework-sent', {
          task,
          attempt: turn.attempt,
          via: turn.reply ? 'hook' : 'typing',
        });
      } else {
        turn.reply?.({ verdict: 'stop', why: verdict.why });
        this.store.journal('turn-answered', {
          task,
          attempt: turn.attempt,
          verdict: 'stop',
          why: verdict.why,
        });
      }
    }
  }
}

/** Bracketed paste keeps a many-line instruction one message; Enter sends it. */
const PASTE_TO_ENTER_MS = 150;

function typeInto(session: LaneSession | null, text: string): void {
  if (!session?.running) return;
  session.write(`\x1b[200~${text}\x1b[201~`);
  setTimeout(() => session.write('\r'), PASTE_TO_ENTER_MS).unref();
}
