import { attemptFiles } from './launch/index.js';
import type { Attempt } from '../../core/records/kernel.js';
import { readExitStatus } from '../../hosts/exit-status.js';
import type { ExitInfo, Host, LaneSession, LaunchSpec } from '../../hosts/host.js';
import { isSameProcessAlive } from '../../process/process-info.js';

// An attempt from before lanes restarted, looked for where it could be: its exit status
// file (it ended), its Herdr tab (reattached), its pid (still running), or nowhere (lost).

export type FoundAttempt =
  | { kind: 'ended'; exit: ExitInfo }
  | { kind: 'pane'; session: LaneSession }
  | { kind: 'pid' }
  | { kind: 'lost' };

export async function lookForAttempt(
  host: Host,
  open: Attempt,
  logDir: string,
  ids: { task_id: string; run_id: string; lane_path: string },
): Promise<FoundAttempt> {
  const status = open.status_path ? readExitStatus(open.status_path) : null;
  if (status) return { kind: 'ended', exit: status };
  const hostOf = open.host === host.name || (host.reattaches?.includes(open.host) ?? false);
  if (open.pane_id && host.reattach && hostOf) {
    const spec: LaunchSpec = {
      taskId: ids.task_id,
      runId: ids.run_id,
      attempt: open.n,
      cwd: ids.lane_path,
      argv: [],
      env: {},
      logPath: attemptFiles(logDir, open.n).logPath,
      statusPath: open.status_path ?? attemptFiles(logDir, open.n).statusPath,
    };
    const session = await host.reattach(spec, open.pane_id);
    if (session) return { kind: 'pane', session };
  }
  if (open.pid !== null && isSameProcessAlive(open.pid, open.pid_start)) return { kind: 'pid' };
  return { kind: 'lost' };
}

const ORPHAN_POLL_MS = 500;

/** Resolves once the process (pid and start time, so not a reused pid) is gone. */
export function processGone(pid: number, start: string | null): Promise<void> {
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      if (isSameProcessAlive(pid, start)) return;
      clearInterval(timer);
      resolve();
    }, ORPHAN_POLL_MS);
  });
}
