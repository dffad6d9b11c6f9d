import type { LaneSession } from '../hosts/host.js';

// Closing an agent's session once its lane's work is integrated: its own quit first (the
// keys it takes to leave), then SIGTERM, then SIGKILL, each after a grace period. The way
// it ended is returned to be recorded in the kernel attempt.

export const CLOSE_GRACE_MS = 5000;

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
  quitKeys: string | null,
  graceMs = CLOSE_GRACE_MS,
): Promise<{ how: ClosedBy; code: number | null; signal: string | null }> {
  const result = async (how: ClosedBy) => {
    const exit = await session.exited;
    return { how, code: exit.code, signal: exit.signal };
  };
  if (quitKeys && session.running) {
    session.write(quitKeys);
    if (await endsWithin(session, graceMs)) return result('quit');
  }
  session.kill('SIGTERM');
  if (await endsWithin(session, graceMs)) return result('SIGTERM');
  session.kill('SIGKILL');
  return result('SIGKILL');
}
