import { existsSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { CLI, makeRepo, tempDir, timeInTmux, writeJson } from './fixtures.js';
import { median, round } from './stats.js';
import type { Figure } from './stats.js';

// first_frame: `lanes start <plan>` in a real terminal (tmux, 160x48) until its confirmation
// screen ("Start this batch?") is visible in `tmux capture-pane`, polled every 10 ms, from
// the start of the tmux session that runs it. The baseline, measured the same way in the same
// run: a session whose command prints one line (tmux's own start and the polling).
//
// The timed starts are the ones a user meets after the first: the bundle's code cache
// (src/process/code-cache.ts) holds what a drawing `lanes start` compiles. The first start,
// with the cache of such starts removed, is measured too (`cold_ms`) and left on its
// confirmation until it has written that cache, as a user's first start would.

const POLL_MS = 10;
const STUCK_MS = 30_000;

async function visible(socket: string, text: string): Promise<void> {
  const deadline = Date.now() + STUCK_MS;
  for (;;) {
    const shown = await execa('tmux', ['-L', socket, 'capture-pane', '-p'], { reject: false });
    if (shown.stdout.includes(text)) return;
    if (Date.now() > deadline) throw new Error(`first_frame: ${text} never showed in ${STUCK_MS} ms`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** Where the code cache of a drawing `lanes start` is kept (code-cache.ts's layout). */
function startCaches(): string[] {
  const root = join(dirname(CLI), '.code-cache');
  if (!existsSync(root)) return [];
  return readdirSync(root).map((node) => join(root, node, 'start.tty'));
}

async function cachesWritten(): Promise<void> {
  const deadline = Date.now() + STUCK_MS;
  let last = -1;
  for (;;) {
    const count = startCaches()
      .filter((d) => existsSync(d))
      .reduce((n, d) => n + readdirSync(d).length, 0);
    if (count > 0 && count === last) return;
    if (Date.now() > deadline)
      throw new Error(`first_frame: the start's code cache was not written in ${STUCK_MS} ms`);
    last = count;
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function firstFrame(runs: number, targetMs = 300): Promise<Figure> {
  const dir = tempDir('lanes-bench-first-frame-');
  const lanes: number[] = [];
  const baseline: number[] = [];
  for (const d of startCaches()) rmSync(d, { recursive: true, force: true });
  let cold = 0;
  for (let i = -1; i < runs; i++) {
    if (i >= 0)
      baseline.push(
        await timeInTmux(
          160,
          48,
          () => `sh -c 'echo FIRST-FRAME-READY; sleep 60'`,
          (s) => visible(s, 'FIRST-FRAME-READY'),
        ),
      );
    const repo = await makeRepo(join(dir, `repo-${i}`));
    const plan = writeJson(join(dir, `plan-${i}.json`), {
      batch: `first${i}`,
      max_parallel: 1,
      executor: 'script',
      children: [
        {
          id: 'a',
          goal: 'write a',
          scope: ['a.txt'],
          acceptance: [{ id: 'ok', run: ['true'] }],
          run: 'true',
        },
      ],
    });
    const command = `${process.execPath} ${CLI} -C ${repo} start ${plan}`;
    const ms = await timeInTmux(
      160,
      48,
      () => command,
      (s) => visible(s, 'Start this batch?'),
    );
    if (i >= 0) {
      lanes.push(ms);
      continue;
    }
    cold = ms;
    // (untimed: a first start left on its confirmation until it has written its cache)
    await timeInTmux(
      160,
      48,
      () => command,
      async (s) => {
        await visible(s, 'Start this batch?');
        await cachesWritten();
      },
    );
  }
  const value = median(lanes);
  return {
    name: 'first_frame',
    value,
    min: Math.min(...lanes),
    max: Math.max(...lanes),
    target: targetMs,
    unit: 'ms',
    met: value <= targetMs,
    detail: {
      lanes_ms: lanes.map(round),
      baseline_ms: baseline.map(round),
      less_tmux_start_ms: round(value - median(baseline)),
      cold_ms: round(cold),
      poll_ms: POLL_MS,
    },
  };
}
