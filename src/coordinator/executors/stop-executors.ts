import { openAttempt } from '../../core/records/kernel.js';
import type { KernelRead } from '../../core/ports/store-port.js';
import { killGroup } from '../../process/process-group.js';
import type { LaneSession } from '../../hosts/host.js';
import { isSameProcessAlive } from '../../process/process-info.js';
import { closeSession } from '../turns/session-close.js';

// Stopping executors for drop and cancel (docs/DECISIONS.md, "No dead ends"): SIGTERM to
// the executor's process group, SIGKILL after a grace period. A live session is stopped
// through its host; an executor lanes only knows from its lane kernel (started by a
// coordinator that is gone) through the wrapper pid and start time recorded there.

export const STOP_GRACE_MS = 3000;
const POLL_MS = 50;

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function stopSession(session: LaneSession, graceMs = STOP_GRACE_MS): Promise<void> {
  if (session.running) await closeSession(session, null, graceMs);
}

/** Stops the executor a lane kernel says is running (by pid), if it still runs. */
export async function stopRecordedExecutor(read: KernelRead, graceMs = STOP_GRACE_MS): Promise<boolean> {
  if (read.kind !== 'ok') return false;
  const open = openAttempt(read.record);
  if (!open?.pid || !isSameProcessAlive(open.pid, open.pid_start)) return false;
  const alive = () => isSameProcessAlive(open.pid!, open.pid_start);
  killGroup(open.pid, 'SIGTERM');
  const until = Date.now() + graceMs;
  while (alive() && Date.now() < until) await pause(POLL_MS);
  if (alive()) killGroup(open.pid, 'SIGKILL');
  while (alive()) await pause(POLL_MS);
  return true;
}
