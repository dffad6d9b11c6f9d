import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LaunchSpec } from '../../src/hosts/host.js';
import { PtyHost } from '../../src/hosts/pty/pty-host.js';
import { ScreenModel } from '../../src/hosts/pty/screen.js';
import { tempDir } from '../helpers/repo.js';
import { ptyHostIn, ptyLaunch } from './pty-launch.js';

// A pane whose executor exits while its screen model is behind, or while a background
// process holds the pty open: nothing the executor wrote may be lost, neither in the
// transcript nor on the screen (src/hosts/screen.ts, src/hosts/pty-drain.ts). Real ptys,
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

const launch = (argv: readonly string[]): LaunchSpec => ptyLaunch('pty-drain', argv);
const ptyHost = (): PtyHost => ptyHostIn(hosts);

const LAST = 'LAST-LINE-OF-THE-EXECUTOR';
const STEPS = 48;

/**
 * An executor (node) that prints a bulk of 2 MB, then STEPS short lines one at a time (each
 * waits, at most 20 ms, for the file `ack-<i>` the test writes when it has read the line, so
 * each is a chunk of its own: 32 chunks behind are reached whatever the chunk sizes of the
 * bulk were), then a tail of 200 lines (15 KB), and exits at once.
 */
function floodThenSteps(dir: string): string[] {
  const script = `
    const fs = require('node:fs');
    const path = require('node:path');
    const line = (tag, i) => tag + ' ' + String(i).padStart(7, '0') + ' ' + 'x'.repeat(60) + '\\n';
    const nap = new Int32Array(new SharedArrayBuffer(4));
    const out = (text) => {
      // Every byte, even where the pty takes a write in part (or not at all, EAGAIN).
      for (let rest = Buffer.from(text); rest.length > 0; ) {
        try {
          rest = rest.subarray(fs.writeSync(1, rest));
        } catch (error) {
          if (error.code !== 'EAGAIN') throw error;
          Atomics.wait(nap, 0, 0, 1);
        }
      }
    };
    let bulk = '';
    for (let i = 0; i < 28000; i++) bulk += line('bulk', i);
    out(bulk + 'BULK-END\\n');
    for (let i = 0; i < ${STEPS}; i++) {
      out('step ' + i + '\\n');
      const ack = path.join(${JSON.stringify(dir)}, 'ack-' + i);
      for (let waited = 0; waited < 20 && !fs.existsSync(ack); waited++) Atomics.wait(nap, 0, 0, 1);
    }
    let tail = '';
    for (let i = 0; i < 200; i++) tail += line('tail', i);
    out(tail + ${JSON.stringify(LAST)} + '\\n');
  `;
  return [process.execPath, '-e', script];
}

describe('PtyHost at the executor exit', () => {
  it('keeps every byte when the executor exits while its screen model is behind', async () => {
    const dir = tempDir('lanes-pty-drain-acks-');
    const spec = launch(floodThenSteps(dir));
    const session = await ptyHost().open(spec);
    // When the bulk has been read, the screen model is given 8 M lines to scroll through
    // first (as a busy TUI keeps it behind), and the steps pile up behind them. A pty host
    // that paused its pty while the screen model was 32 chunks behind lost the rest here:
    // the executor exited with it still in the kernel's pty buffer.
    let seen = '';
    let behind = false;
    session.onOutput((chunk) => {
      seen = (seen + chunk).slice(-64);
      if (!behind && seen.includes('BULK-END')) {
        behind = true;
        const scroll = '\n'.repeat(4000);
        for (let i = 0; i < 2000; i++) void session.screen.write(scroll);
      }
      for (const m of chunk.matchAll(/step (\d+)/g)) writeFileSync(join(dir, `ack-${m[1]}`), '');
    });

    expect(await session.exited).toEqual({ code: 0, signal: null });
    const logged = readFileSync(spec.logPath, 'utf8').split('\r\n');
    expect(logged.pop()).toBe('');
    expect(logged.at(-1)).toBe(LAST);
    expect(logged.filter((l) => l.startsWith('bulk ')).length).toBe(28000);
    expect(logged.filter((l) => l.startsWith('step ')).length).toBe(STEPS);
    expect(logged.filter((l) => l.startsWith('tail ')).length).toBe(200);
    // `exited` waits for the screen model: its last lines are the executor's last.
    expect(session.recentLines(2)).toEqual([`tail 0000199 ${'x'.repeat(60)}`, LAST]);
    expect(session.screen.lines()).toContain(LAST);
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
    expect(session.screen.lines()).toContain(LAST);
  });
});

describe('ScreenModel behind a flood', () => {
  it('drops the oldest queued output, keeps the end on the screen and the screen it was on', async () => {
    const screen = new ScreenModel(80, 24, 100);
    const line = `${'y'.repeat(70)}\r\n`;
    const writes: Promise<void>[] = [];
    // Past the chunks xterm is given at once: these wait in the queue, and are dropped.
    for (let i = 0; i < 100; i++) writes.push(screen.write(line));
    writes.push(screen.write('\x1b[31mred from here on, on the alternate screen\r\n\x1b[?1049h'));
    for (let i = 0; i < 40_000; i++) writes.push(screen.write(line)); // 2.9 M characters
    writes.push(screen.write('THE-END'));
    await screen.flushed();
    await Promise.all(writes); // every write settles, parsed or dropped
    expect(screen.lines().at(-1)).toBe('THE-END');
    expect(screen.isAlternate).toBe(true);
    // Dropping reset the colours: the end is drawn in the default colour.
    expect(screen.styledLines().at(-1)).toMatchObject([{ text: 'THE-END', fg: null }]);
    screen.dispose();
  });
});
