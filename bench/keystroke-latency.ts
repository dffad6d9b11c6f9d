import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import type { TuiActions } from '../components/App.js';
import { batchPorts } from '../src/cli/batch-ports.js';
import { createBatch, preflight } from '../src/cli/confirm.js';
import { parsePlanText } from '../src/core/plan.js';
import { PtyHost } from '../src/hosts/pty-host.js';
import { findRepo } from '../src/store/state-dir.js';
import { withProductionReact } from '../src/tui/production-mode.js';
import { INK_OPTIONS } from '../src/tui/ink-options.js';
import { TuiStore } from '../src/tui/tui-store.js';
import { independentPlan, makeRepo, tempDir } from './fixtures.js';
import { median, percentile, round } from './stats.js';
import type { Figure } from './stats.js';

// 5. keystroke_latency: with 6 lanes each streaming output as fast as it can, the time from
// a key written to the TUI's stdin to the first frame that shows its effect (the selection
// moved). The real Ink renderer (not debug mode, so its frame throttle counts) writes into
// an in-memory terminal. Baseline: the same keys with no lane streaming.

export class FakeStdout extends EventEmitter {
  isTTY = true;
  columns = 160;
  rows = 48;
  last = '';
  write = (data: string) => {
    // Ink writes control sequences (synchronized output, cursor) apart from the frame itself.
    if (stripVTControlCharacters(data).trim() === '') return true;
    this.last = data;
    this.emit('frame', data);
    return true;
  };
}

export class FakeStdin extends EventEmitter {
  isTTY = true;
  private queue: string[] = [];
  write(data: string) {
    this.queue.push(data);
    this.emit('readable');
  }
  read = () => this.queue.shift() ?? null;
  setEncoding() {}
  setRawMode() {}
  ref() {}
  unref() {}
  resume() {}
  pause() {}
}

export const NO_ACTIONS: TuiActions = {
  confirm: () => {},
  resume: () => {},
  retry: () => {},
  review: () => {},
  togglePause: () => {},
  drop: () => {},
  cancel: () => {},
  diff: async () => '',
  qaLog: async () => '',
  openShell: async () => {},
  focusOutside: () => false,
  resize: () => {},
  runningInApp: () => 0,
  quit: () => {},
};

async function measure(streaming: number, keys: number): Promise<number[]> {
  const dir = tempDir('lanes-bench-keys-');
  const repo = await findRepo(await makeRepo(dir));
  const plan = parsePlanText(JSON.stringify(independentPlan('keys', 6, 6)), 'plan.json');
  await createBatch(repo, plan, await preflight(repo, plan, {}), new Date());
  const ports = batchPorts(repo, plan.batch);
  const store = new TuiStore(ports.store, plan);
  const host = new PtyHost({ cols: 114, rows: 41 }, 1000);
  for (const child of plan.children.slice(0, streaming)) {
    const session = await host.open({
      taskId: child.id,
      runId: 'bench',
      attempt: 1,
      cwd: repo.root,
      argv: [
        'sh',
        '-c',
        `yes "$(printf '\\033[32m${child.id}\\033[0m streaming line with \\033[1mbold\\033[0m text')"`,
      ],
      env: {},
      logPath: join(dir, `${child.id}.log`),
      statusPath: join(dir, `${child.id}.status`),
    });
    store.onEvent({ kind: 'launched', task: child.id, attempt: 1, session });
  }
  const stdout = new FakeStdout();
  const stdin = new FakeStdin();
  // Loaded as lanes loads them (src/cli/lazy-tui.ts): React's production build.
  const [{ render }, { createElement }, { App }] = await withProductionReact(() =>
    Promise.all([import('ink'), import('react'), import('../components/App.js')]),
  );
  const instance = render(createElement(App, { store, actions: NO_ACTIONS }), {
    stdout: stdout as unknown as NodeJS.WriteStream,
    stdin: stdin as unknown as NodeJS.ReadStream,
    ...INK_OPTIONS,
  });
  const ids = plan.children.map((c) => c.id);
  const selectedIs = (frame: string, id: string) =>
    new RegExp(`› ${id} `).test(stripVTControlCharacters(frame));
  await new Promise<void>((resolve) => {
    const check = () => (selectedIs(stdout.last, ids[0]!) ? resolve() : setTimeout(check, 10));
    check();
  });
  const latencies: number[] = [];
  let at = 0;
  for (let k = 0; k < keys; k++) {
    const down = at < ids.length - 1 && (k % 10 < 5 || at === 0);
    const next = down ? at + 1 : at - 1;
    const started = process.hrtime.bigint();
    const shown = new Promise<void>((resolve) => {
      const onFrame = (frame: string) => {
        if (!selectedIs(frame, ids[next]!)) return;
        stdout.off('frame', onFrame);
        resolve();
      };
      stdout.on('frame', onFrame);
    });
    stdin.write(down ? 'j' : 'k');
    await shown;
    latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
    at = next;
  }
  instance.unmount();
  await host.dispose();
  store.dispose();
  return latencies;
}

export async function keystrokeLatency(keys: number): Promise<Figure> {
  const quiet = await measure(0, keys);
  const busy = await measure(6, keys);
  const p95 = percentile(busy, 95);
  return {
    name: 'keystroke_latency',
    value: p95,
    min: Math.min(...busy),
    max: Math.max(...busy),
    target: 50,
    unit: 'ms p95',
    met: p95 <= 50,
    detail: {
      keys,
      streaming_lanes: 6,
      p50_ms: round(median(busy)),
      p95_ms: round(p95),
      baseline_p50_ms: round(median(quiet)),
      baseline_p95_ms: round(percentile(quiet, 95)),
      ratio_p95_to_baseline: round(p95 / percentile(quiet, 95)),
    },
  };
}
