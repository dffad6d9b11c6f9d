import type { LaneSession } from '../hosts/host.js';

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
