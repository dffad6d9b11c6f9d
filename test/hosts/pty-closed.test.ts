import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LaunchSpec } from '../../src/hosts/host.js';
import { PtyHost, type PtySession } from '../../src/hosts/pty/pty-host.js';
import { tempDir } from '../helpers/repo.js';

// A pane's pty closes when its executor's side is gone, and node-pty reports the exit a
// little later (the read socket's EIO and the child's reaping race). The TUI resizes panes
// (and the user types into them) at any moment, so a session must never touch the pty's
// file descriptor once it is closed: the ioctl fails with EBADF (seen in CI, killing the
// TUI), and a write could reach whatever file reuses that number (src/hosts/pty-host.ts).

const hosts: PtyHost[] = [];
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.dispose()));
});

function launch(dir: string, n: number): LaunchSpec {
  return {
    taskId: `T${n}`,
    runId: `run-pty-closed-${process.pid}`, // (its own: an exit sweeps every process holding its LANES_RUN)
    attempt: 1,
    cwd: dir,
    argv: ['sh', '-c', 'printf "%s\\n" ended'],
    env: {},
    logPath: join(dir, 'logs', `attempt-${n}.log`),
    statusPath: join(dir, 'logs', `attempt-${n}.status`),
  };
}

/** Resizes and writes to the session on every turn of the event loop until it has exited. */
async function pokeUntilExit(session: PtySession): Promise<unknown[]> {
  const errors: unknown[] = [];
  let ended = false;
  void session.exited.then(() => (ended = true));
  let cols = 60;
  while (!ended) {
    try {
      cols = cols === 60 ? 61 : 60;
      session.resize(cols, 20);
      session.write('x');
    } catch (error) {
      errors.push(error);
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  return errors;
}

describe('a pty session whose pty has closed', () => {
  it('is resized and written to without touching the closed file descriptor', async () => {
    const dir = tempDir('lanes-pty-closed-');
    const host = new PtyHost({ cols: 60, rows: 20 });
    hosts.push(host);
    const errors: unknown[] = [];
    for (let round = 0; round < 40; round++) {
      const sessions = await Promise.all([0, 1, 2, 3].map((i) => host.open(launch(dir, round * 4 + i))));
      for (const found of await Promise.all(sessions.map(pokeUntilExit))) errors.push(...found);
    }
    expect(errors.map(String)).toEqual([]);
  });
});
