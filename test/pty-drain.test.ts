import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LaunchSpec } from '../src/hosts/host.js';
import { PtyHost } from '../src/hosts/pty-host.js';
import { tempDir } from './helpers/repo.js';
import { until } from './helpers/until.js';

// A pane whose executor exits while its screen model is behind (the pty paused by flow
// control) or while a background process holds the pty open: nothing the executor wrote may
// be lost, neither in the transcript nor on the screen (src/hosts/pty-drain.ts). Real ptys,
// a real headless xterm; the waits are on files and on the session's own exit.

const hosts: PtyHost[] = [];
const strays: number[] = [];
afterEach(async () => {
  for (const pid of strays.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await Promise.all(hosts.splice(0).map((h) => h.dispose()));
});

function launch(argv: readonly string[]): LaunchSpec {
  const dir = tempDir('lanes-pty-drain-');
  return {
    taskId: 'T1',
    runId: 'run-1',
    attempt: 1,
    cwd: dir,
    argv,
    env: { LANES_TEST: '1' },
    logPath: join(dir, 'logs', 'attempt-1.log'),
    statusPath: join(dir, 'logs', 'attempt-1.status'),
  };
}

function ptyHost(): PtyHost {
  const host = new PtyHost({ cols: 80, rows: 24 }, 500);
  hosts.push(host);
  return host;
}

const LAST = 'LAST-LINE-OF-THE-EXECUTOR';

/**
 * An executor (node) that prints a bulk of 2 MB, then waits for the file `go`, then prints a
 * tail a little larger than the 32 chunks the screen model may lag behind (so the pty is
 * paused with the rest of the tail in the kernel's buffer) and exits at once.
 */
function floodThenTail(go: string): string[] {
  const script = `
    const fs = require('node:fs');
    const line = (tag, i) => tag + ' ' + String(i).padStart(7, '0') + ' ' + 'x'.repeat(60) + '\\n';
    let bulk = '';
    for (let i = 0; i < 28000; i++) bulk += line('bulk', i);
    fs.writeSync(1, bulk + 'BULK-END\\n');
    const nap = new Int32Array(new SharedArrayBuffer(4));
    while (!fs.existsSync(${JSON.stringify(go)})) Atomics.wait(nap, 0, 0, 5);
    let tail = '';
    for (let i = 0; i < 2400; i++) tail += line('tail', i);
    fs.writeSync(1, tail + ${JSON.stringify(LAST)} + '\\n');
  `;
  return [process.execPath, '-e', script];
}

describe('PtyHost at the executor exit', () => {
  it('keeps every byte when the executor exits while its screen model is behind', async () => {
    const dir = tempDir('lanes-pty-drain-go-');
    const go = join(dir, 'go');
    const spec = launch(floodThenTail(go));
    const session = await ptyHost().open(spec);
    // When the bulk has been read, the screen model is given 4 M lines to scroll through
    // first (as a busy TUI keeps it behind), and only then is the executor let go.
    let seen = '';
    session.onOutput((chunk) => {
      if (existsSync(go)) return;
      seen = (seen + chunk).slice(-64);
      if (!seen.includes('BULK-END')) return;
      const scroll = '\n'.repeat(4000);
      for (let i = 0; i < 1000; i++) void session.screen.write(scroll);
      writeFileSync(go, '');
    });

    expect(await session.exited).toEqual({ code: 0, signal: null });
    const logged = readFileSync(spec.logPath, 'utf8').split('\r\n');
    expect(logged.pop()).toBe('');
    expect(logged.at(-1)).toBe(LAST);
    expect(logged.filter((l) => l.startsWith('tail ')).length).toBe(2400);
    expect(logged.filter((l) => l.startsWith('bulk ')).length).toBe(28000);
    // `exited` waits for the screen model: its last lines are the executor's last.
    expect(session.recentLines(2)).toEqual([`tail 0002399 ${'x'.repeat(60)}`, LAST]);
    expect(session.screen.lines().some((l) => l === LAST)).toBe(true);
  });

  it('ends with the output read to its end when a background process holds the pty open', async () => {
    // The background process ignores the hang-up, so the pty never reports its end (EIO).
    const script = `sh -c 'trap "" HUP; exec sleep 60' & echo "bg:$!"; seq 1 30000; echo ${LAST}`;
    const spec = launch(['sh', '-c', script]);
    const session = await ptyHost().open(spec);

    expect(await session.exited).toEqual({ code: 0, signal: null });
    const log = readFileSync(spec.logPath, 'utf8');
    const bg = Number(/bg:(\d+)/.exec(log)?.[1]);
    expect(bg).toBeGreaterThan(0);
    strays.push(bg);
    // The session ended while the background process still held the pty.
    expect(() => process.kill(bg, 0)).not.toThrow();
    const lines = log.split('\r\n');
    expect(lines.at(-2)).toBe(LAST);
    expect(lines.filter((l) => /^\d+$/.test(l)).length).toBe(30000);
    expect(session.recentLines(2)).toEqual(['30000', LAST]);
    await until(() => session.screen.lines().includes(LAST), `${LAST} on the screen`, { timeoutMs: 8000 });
  });
});
