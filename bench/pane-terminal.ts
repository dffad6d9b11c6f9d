import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { CLI, makeRepo, tempDir, writeJson } from './fixtures.js';
import { mixedText } from './pane-throughput.js';
import { ratioFigure } from './stats.js';
import type { Figure } from './stats.js';

// pane_throughput_terminal: what the user meets. The built `lanes start` runs in a real
// terminal (tmux, 160x48); its one lane prints a start marker, waits for the bench to see
// it, then cats 20 MB of coloured text ending in an end marker. The clock runs from the
// start marker visible in `tmux capture-pane` to the end marker visible, polled every 10
// ms. Baseline: the same script in a plain tmux pane of the same size, measured the same
// way. Both wait for the same go file, so the script's own start costs neither side.

const COLS = 160;
const ROWS = 48;
const START = 'PANE-BENCH-START';
const END = 'PANE-BENCH-END';
const POLL_MS = 10;
const STUCK_MS = 60_000;

let servers = 0;

/** The lane's script: the start marker, the wait for `go`, the file, then the lane's one file. */
function script(file: string, go: string): string {
  return `echo ${START}; while [ ! -e ${go} ]; do sleep 0.01; done; cat ${file}; echo done > out.txt; sleep 600`;
}

async function tmux(socket: string, ...args: string[]): Promise<string> {
  return (await execa('tmux', ['-f', '/dev/null', '-L', socket, ...args])).stdout;
}

async function pollUntil(socket: string, text: string, what: string): Promise<void> {
  const deadline = Date.now() + STUCK_MS;
  for (;;) {
    if ((await tmux(socket, 'capture-pane', '-p')).includes(text)) return;
    if (Date.now() > deadline) throw new Error(`${what}: ${text} never showed in ${STUCK_MS} ms`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** Starts `command` in a tmux server of its own; times from START shown to END shown. */
async function timeMarkers(
  command: string,
  go: string,
  cwd: string,
  before?: (socket: string) => Promise<void>,
) {
  const socket = `lanes-bench-term-${process.pid}-${++servers}`;
  try {
    // The session's own folder: the baseline's script writes out.txt where it runs.
    await tmux(socket, 'new-session', '-d', '-c', cwd, '-x', `${COLS}`, '-y', `${ROWS}`, command);
    await before?.(socket);
    await pollUntil(socket, START, 'start');
    const started = process.hrtime.bigint();
    writeFileSync(go, '');
    await pollUntil(socket, END, 'end');
    return Number(process.hrtime.bigint() - started) / 1e6;
  } finally {
    await execa('tmux', ['-L', socket, 'kill-server'], { reject: false });
  }
}

async function throughLanes(dir: string, file: string, run: number): Promise<number> {
  const repo = await makeRepo(join(dir, `lanes-${run}`));
  const go = join(dir, `go-lanes-${run}`);
  const plan = writeJson(join(dir, `plan-${run}.json`), {
    batch: `term${run}`,
    max_parallel: 1,
    executor: 'script',
    children: [
      {
        id: 'out',
        goal: 'print the file',
        scope: ['out.txt'],
        acceptance: [{ id: 'ok', run: ['true'] }],
        run: script(file, go),
      },
    ],
  });
  const command = `${process.execPath} ${CLI} -C ${repo} start ${plan}`;
  return timeMarkers(command, go, dir, async (socket) => {
    await pollUntil(socket, 'Start this batch?', 'confirmation');
    await tmux(socket, 'send-keys', 'y');
  });
}

function throughTmux(dir: string, file: string, run: number): Promise<number> {
  const go = join(dir, `go-tmux-${run}`);
  if (existsSync(go)) throw new Error(`${go} exists`);
  const cwd = join(dir, `tmux-${run}`);
  mkdirSync(cwd);
  return timeMarkers(`sh -c '${script(file, go)}'`, go, cwd);
}

export async function paneTerminal(megabytes: number, runs: number): Promise<Figure> {
  const dir = tempDir('lanes-bench-pane-term-');
  const file = join(dir, 'mixed.txt');
  writeFileSync(file, `${mixedText(megabytes * 1024 * 1024)}${END}\n`);
  const lanes: number[] = [];
  const baseline: number[] = [];
  for (let i = 0; i < runs; i++) {
    baseline.push(await throughTmux(dir, file, i));
    lanes.push(await throughLanes(dir, file, i));
  }
  return ratioFigure('pane_throughput_terminal', lanes, baseline, 1.5, {
    megabytes,
    cols: COLS,
    rows: ROWS,
    poll_ms: POLL_MS,
  });
}
