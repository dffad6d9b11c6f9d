import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { PtyHost } from '../src/hosts/pty/pty-host.js';
import type { PtySession } from '../src/hosts/pty/pty-host.js';
import { catLaunch, tempDir, timeInTmux } from './fixtures.js';
import { ratioFigure, timeIt } from './stats.js';
import type { Figure } from './stats.js';

// 4. pane_throughput: 20 MB of mixed text and ANSI colour written by an executor through
// the pty host and its screen model, against the same bytes through tmux (a detached
// session running cat, waited until done).

export function mixedText(bytes: number): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line =
      i % 3 === 0
        ? `\x1b[3${i % 8}mline ${i}\x1b[0m plain text with \x1b[1mbold\x1b[0m and \x1b[38;5;${i % 256}m256 colours\x1b[0m\n`
        : `line ${i}: the quick brown fox jumps over the lazy dog ${'x'.repeat(i % 40)}\n`;
    parts.push(line);
    size += line.length;
  }
  return parts.join('');
}

async function throughPty(file: string, dir: string): Promise<number> {
  const host = new PtyHost({ cols: 120, rows: 32 }, 1000);
  return timeIt(async () => {
    const session = (await host.open(catLaunch(dir, 'pane', file))) as PtySession;
    await session.exited;
    await session.screen.flushed();
    session.screen.dispose();
  });
}

function throughTmux(file: string): Promise<number> {
  return timeInTmux(
    120,
    32,
    (socket) => `cat ${file}; tmux -L ${socket} wait-for -S done`,
    async (socket) => void (await execa('tmux', ['-L', socket, 'wait-for', 'done'])),
  );
}

export async function paneThroughput(megabytes: number, runs: number): Promise<Figure> {
  const dir = tempDir('lanes-bench-pane-');
  const file = join(dir, 'mixed.txt');
  writeFileSync(file, mixedText(megabytes * 1024 * 1024));
  const lanes: number[] = [];
  const baseline: number[] = [];
  for (let i = 0; i < runs; i++) {
    baseline.push(await throughTmux(file));
    lanes.push(await throughPty(file, dir));
  }
  return ratioFigure('pane_throughput', lanes, baseline, 1.5, { megabytes });
}
