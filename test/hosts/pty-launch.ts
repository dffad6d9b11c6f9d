import { join } from 'node:path';
import type { LaunchSpec } from '../../src/hosts/host.js';
import { PtyHost } from '../../src/hosts/pty/pty-host.js';
import { tempDir } from '../helpers/repo.js';

// One executor's launch in a folder of its own, and a PtyHost at 80x24, as the pty host
// tests use them. The run id is the test file's own (`label`): an executor's exit stops
// every process whose environment holds its LANES_RUN, so a shared id would reach
// another file's processes.

export function ptyLaunch(label: string, argv: readonly string[]): LaunchSpec {
  const dir = tempDir(`lanes-${label}-`);
  return {
    taskId: 'T1',
    runId: `run-${label}-${process.pid}`,
    attempt: 1,
    cwd: dir,
    argv,
    env: { LANES_TEST: '1' },
    logPath: join(dir, 'logs', 'attempt-1.log'),
    statusPath: join(dir, 'logs', 'attempt-1.status'),
  };
}

/** A PtyHost at 80x24, kept in `hosts` for the file's teardown. */
export function ptyHostIn(hosts: PtyHost[]): PtyHost {
  const host = new PtyHost({ cols: 80, rows: 24 }, 500);
  hosts.push(host);
  return host;
}
