import { recordSessionClosed } from '../../core/turns/turn.js';
import type { Clock } from '../../core/ports/clock.js';
import type { CoordinatorStorePort } from '../../core/ports/store-port.js';
import type { LaneSession } from '../../hosts/host.js';

// Closing an agent's session once its lane's work is integrated: its own quit first (the
// keys it takes to leave), then SIGTERM, then SIGKILL, each after a grace period. The way
// it ended is returned to be recorded in the kernel attempt.

export const CLOSE_GRACE_MS = 5000;
/** Between the chunks of a quit command: long enough not to be taken for one paste. */
const KEY_GAP_MS = 300;

export type ClosedBy = 'quit' | 'SIGTERM' | 'SIGKILL';

function endsWithin(session: LaneSession, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    void session.exited.then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

export async function closeSession(
  session: LaneSession,
  quitKeys: readonly string[] | null,
  graceMs = CLOSE_GRACE_MS,
): Promise<{ how: ClosedBy; code: number | null; signal: string | null }> {
  const result = async (how: ClosedBy) => {
    const exit = await session.exited;
    return { how, code: exit.code, signal: exit.signal };
  };
  if (quitKeys && session.running) {
    for (const [i, keys] of quitKeys.entries()) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, KEY_GAP_MS));
      session.write(keys);
    }
    if (await endsWithin(session, graceMs)) return result('quit');
  }
  session.kill('SIGTERM');
  if (await endsWithin(session, graceMs)) return result('SIGTERM');
  session.kill('SIGKILL');
  return result('SIGKILL');
}

interface LiveSession {
  session: LaneSession | null;
  /** Set while lanes closes it: its end is then no executor exit. */
  closing?: boolean;
}

/**
 * Carries out a close-session effect (the tick asks it once the lane's work is integrated,
 * core/tick/effects.ts): the session closed, how it ended recorded in the kernel attempt.
 * Nothing when it is no longer running or being closed already.
 */
export async function closeLive(
  ctx: {
    live: Map<string, LiveSession>;
    store: CoordinatorStorePort;
    quitKeysOf(task: string): readonly string[] | null;
    forget(task: string): void;
    clock: Clock;
  },
  task: string,
): Promise<void> {
  const live = ctx.live.get(task);
  const session = live?.session;
  if (!live || !session?.running || live.closing) return;
  live.closing = true;
  ctx.forget(task);
  const closed = await closeSession(session, ctx.quitKeysOf(task));
  ctx.live.delete(task);
  const read = ctx.store.readKernel(task);
  const attempt = read.kind === 'ok' ? read.record.attempts.at(-1) : undefined;
  if (read.kind === 'ok' && attempt)
    ctx.store.writeKernel(
      recordSessionClosed(read.record, attempt.n, closed.how, closed, ctx.clock.now().toISOString()),
    );
  ctx.store.journal('session-closed', { task, attempt: attempt?.n ?? null, how: closed.how });
}
