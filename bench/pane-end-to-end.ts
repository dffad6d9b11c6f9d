import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import xterm from '@xterm/headless';
import { execa } from 'execa';
import { batchPorts } from '../src/cli/batch-run/batch-ports.js';
import { createBatch, preflight } from '../src/cli/start/confirm.js';
import { parsePlanText } from '../src/core/plan/plan.js';
import { PtyHost } from '../src/hosts/pty/pty-host.js';
import { findRepo } from '../src/store/state-dir.js';
import { INK_OPTIONS } from '../src/tui/ink-options.js';
import { TuiStore } from '../src/tui/tui-store.js';
import { catLaunch, independentPlan, makeRepo, tempDir, timeInTmux } from './fixtures.js';
import { FakeStdin, loadApp, NO_ACTIONS } from './tui-keys.js';
import { mixedText } from './pane-throughput.js';
import { ratioFigure, timeIt } from './stats.js';
import type { Figure } from './stats.js';

// 4b. pane_throughput end to end: 20 MB of coloured text from an executor until its last
// line is on the TUI's screen, 160x48. What the TUI writes to its terminal is parsed by a
// second screen model (the user's terminal, stood in for); the clock stops when that screen
// shows the file's last line. Baseline: tmux showing the same file at the same size, until
// its capture-pane shows the last line.

const { Terminal } = xterm;
const COLS = 160;
const ROWS = 48;
const MARKER = 'END-OF-PANE-BENCH';
const STUCK_MS = 20_000;

/** A terminal of the user's, in memory: every byte the TUI writes is parsed into a screen. */
class ScreenStdout {
  isTTY = true;
  columns = COLS;
  rows = ROWS;
  readonly terminal: InstanceType<typeof Terminal> = new Terminal({
    cols: COLS,
    rows: ROWS,
    allowProposedApi: true,
  });
  private watcher: (() => void) | null = null;
  on() {
    return this;
  }
  off() {
    return this;
  }
  once() {
    return this;
  }
  removeListener() {
    return this;
  }
  write = (data: string) => {
    this.terminal.write(data, () => this.watcher?.());
    return true;
  };
  shows(text: string): boolean {
    const buffer = this.terminal.buffer.active;
    for (let y = 0; y < ROWS; y++)
      if (
        buffer
          .getLine(buffer.viewportY + y)
          ?.translateToString(true)
          .includes(text)
      )
        return true;
    return false;
  }
  until(text: string): Promise<void> {
    return new Promise((resolve) => {
      this.watcher = () => {
        if (!this.shows(text)) return;
        this.watcher = null;
        resolve();
      };
    });
  }
}

async function throughTui(file: string): Promise<number> {
  const dir = tempDir('lanes-bench-pane-e2e-');
  const repo = await findRepo(await makeRepo(dir));
  const plan = parsePlanText(JSON.stringify(independentPlan('pane', 1, 1)), 'plan.json');
  await createBatch(repo, plan, await preflight(repo, plan, {}), new Date());
  const ports = batchPorts(repo, plan.batch);
  const store = new TuiStore(ports.store, plan);
  const host = new PtyHost({ cols: 114, rows: 41 }, 1000);
  const stdout = new ScreenStdout();
  const { render, createElement, App } = await loadApp();
  const instance = render(createElement(App, { store, actions: NO_ACTIONS }), {
    stdout: stdout as unknown as NodeJS.WriteStream,
    stdin: new FakeStdin() as unknown as NodeJS.ReadStream,
    ...INK_OPTIONS,
  });
  try {
    return await timeIt(async () => {
      const shown = stdout.until(MARKER);
      const session = await host.open(catLaunch(dir, plan.children[0]!.id, file));
      store.onEvent({ kind: 'launched', task: plan.children[0]!.id, attempt: 1, session });
      let timer: NodeJS.Timeout | undefined;
      const stuck = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          const tail = session.recentLines(1).join('');
          reject(
            new Error(
              `the file's last line never reached the screen in ${STUCK_MS} ms; the pane's screen model ends at ${JSON.stringify(tail.slice(0, 40))}`,
            ),
          );
        }, STUCK_MS);
      });
      try {
        await Promise.race([shown, stuck]);
      } finally {
        clearTimeout(timer);
      }
    });
  } finally {
    instance.unmount();
    await host.dispose();
    store.dispose();
    stdout.terminal.dispose();
  }
}

function throughTmux(file: string): Promise<number> {
  return timeInTmux(
    COLS,
    ROWS,
    () => `cat ${file}; sleep 60`,
    async (socket) => {
      for (;;) {
        const shown = await execa('tmux', ['-L', socket, 'capture-pane', '-p']);
        if (shown.stdout.includes(MARKER)) return;
        await new Promise((r) => setTimeout(r, 5));
      }
    },
  );
}

export async function paneEndToEnd(megabytes: number, runs: number): Promise<Figure> {
  const dir = tempDir('lanes-bench-pane-e2e-');
  const file = join(dir, 'mixed.txt');
  writeFileSync(file, `${mixedText(megabytes * 1024 * 1024)}${MARKER}\n`);
  const lanes: number[] = [];
  const baseline: number[] = [];
  for (let i = 0; i < runs; i++) {
    baseline.push(await throughTmux(file));
    lanes.push(await throughTui(file));
  }
  return ratioFigure('pane_throughput_end_to_end', lanes, baseline, 1.5, {
    megabytes,
    cols: COLS,
    rows: ROWS,
  });
}
