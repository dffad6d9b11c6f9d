import { existsSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { codeCacheFolder } from '../src/process/code-cache.js';
import { CLI, makeRepo, pollUntil, tempDir, timeInTmux, writeJson } from './fixtures.js';
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

const visible = (socket: string, text: string): Promise<void> =>
  pollUntil(
    async () => {
      const shown = await execa('tmux', ['-L', socket, 'capture-pane', '-p'], { reject: false });
      return shown.stdout.includes(text);
    },
    `first_frame: ${text}`,
    { timeoutMs: STUCK_MS, everyMs: POLL_MS },
  );

/** Until the cache of a drawing `lanes start` is there and no longer grows (code-cache.ts). */
function startCacheWritten(folder: string): Promise<void> {
  let last = -1;
  return pollUntil(
    () => {
      const count = existsSync(folder) ? readdirSync(folder).length : 0;
      const settled = count > 0 && count === last;
      last = count;
      return settled;
    },
    "first_frame: the start's code cache",
    { timeoutMs: STUCK_MS, everyMs: 200 },
  );
}

export async function firstFrame(runs: number, targetMs = 300): Promise<Figure> {
  const dir = tempDir('lanes-bench-first-frame-');
  /** A repository and a one-child plan of its own for start `i`, and the command that starts it. */
  const startCommand = async (i: number): Promise<string> => {
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
    return `${process.execPath} ${CLI} -C ${repo} start ${plan}`;
  };
  const toFrame = (command: string) =>
    timeInTmux(
      160,
      48,
      () => command,
      (s) => visible(s, 'Start this batch?'),
    );

  // The first start with no cache of its kind, then one left on its confirmation until it
  // has written that cache (untimed).
  const caches = codeCacheFolder(dirname(CLI), 'start.tty');
  rmSync(caches, { recursive: true, force: true });
  const first = await startCommand(-1);
  const cold = await toFrame(first);
  await timeInTmux(
    160,
    48,
    () => first,
    async (s) => {
      await visible(s, 'Start this batch?');
      await startCacheWritten(caches);
    },
  );

  const lanes: number[] = [];
  const baseline: number[] = [];
  for (let i = 0; i < runs; i++) {
    baseline.push(
      await timeInTmux(
        160,
        48,
        () => `sh -c 'echo FIRST-FRAME-READY; sleep 60'`,
        (s) => visible(s, 'FIRST-FRAME-READY'),
      ),
    );
    lanes.push(await toFrame(await startCommand(i)));
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
