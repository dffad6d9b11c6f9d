import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { batchPorts } from '../src/cli/batch-ports.js';
import { LaneWorktrees } from '../src/git/lane-worktrees.js';
import { createBatch, preflight } from '../src/cli/confirm.js';
import { Coordinator } from '../src/coordinator/coordinator.js';
import { loadConfig } from '../src/store/config-file.js';
import { parsePlanText } from '../src/core/plan.js';
import { PtyHost } from '../src/hosts/pty-host.js';
import { findRepo } from '../src/store/state-dir.js';
import { withProductionReact } from '../src/tui/production-mode.js';
import { INK_OPTIONS } from '../src/tui/ink-options.js';
import { TuiStore } from '../src/tui/tui-store.js';
import { FakeStdin, FakeStdout, NO_ACTIONS } from './keystroke-latency.js';
import { makeRepo, tempDir } from './fixtures.js';
import { median, percentile, round } from './stats.js';
import type { Figure } from './stats.js';

// 5b. keystroke_latency while integrating: the TUI and the coordinator in one process, as
// `lanes start` runs them (pty lanes). 16 children at parallel 8; each executor waits for
// its wave's go file, then writes its file and exits. Keys are sent (each timed to the
// frame that shows the moved selection) from the moment 8 lanes are told to exit together
// until the keys of that wave are done, twice over. Baseline: the same keys while the 8
// lanes of the first wave wait (an idle batch).

const WAVE = 8;

function plan(dir: string): string {
  return JSON.stringify({
    batch: 'keysint',
    max_parallel: WAVE,
    executor: 'script',
    children: Array.from({ length: 2 * WAVE }, (_, i) => {
      const id = `c${String(i).padStart(4, '0')}`;
      const go = join(dir, `go-${Math.floor(i / WAVE)}`);
      return {
        id,
        goal: `write ${id}`,
        scope: [`files/${id}.txt`],
        acceptance: [{ id: 'ok', run: ['true'] }],
        run: `while [ ! -f '${go}' ]; do sleep 0.1; done; mkdir -p files && echo ${i} > files/${id}.txt`,
      };
    }),
  });
}

async function until(ok: () => boolean): Promise<void> {
  while (!ok()) await new Promise((r) => setTimeout(r, 20));
}

async function measure(keysPerWave: number): Promise<{ idle: number[]; busy: number[] }> {
  const dir = tempDir('lanes-bench-keysint-');
  const repo = await findRepo(await makeRepo(dir));
  const parsed = parsePlanText(plan(dir), 'plan.json');
  await createBatch(repo, parsed, await preflight(repo, parsed, {}), new Date());
  const ports = batchPorts(repo, parsed.batch);
  const host = new PtyHost({ cols: 114, rows: 41 }, 1000);
  let store: TuiStore | null = null;
  const coordinator = new Coordinator({
    batchId: parsed.batch,
    repoRoot: repo.root,
    ports,
    worktrees: new LaneWorktrees(repo.root),
    config: loadConfig(repo.root),
    host,
    onEvent: (event) => store?.onEvent(event),
  });
  store = new TuiStore(ports.store, parsed, coordinator);
  const stdout = new FakeStdout();
  const stdin = new FakeStdin();
  const [{ render }, { createElement }, { App }] = await withProductionReact(() =>
    Promise.all([import('ink'), import('react'), import('../components/App.js')]),
  );
  const instance = render(createElement(App, { store, actions: NO_ACTIONS }), {
    stdout: stdout as unknown as NodeJS.WriteStream,
    stdin: stdin as unknown as NodeJS.ReadStream,
    ...INK_OPTIONS,
  });
  const finished = coordinator.run();
  const ids = parsed.children.map((c) => c.id);
  const selectedIs = (frame: string, id: string) =>
    new RegExp(`› ${id} `).test(stripVTControlCharacters(frame));
  await until(() => selectedIs(stdout.last, ids[0]!));
  let at = 0;
  const keys = async (n: number, more: () => boolean = () => true): Promise<number[]> => {
    const latencies: number[] = [];
    for (let k = 0; k < n && more(); k++) {
      const down = at < WAVE - 1 && (k % 10 < 5 || at === 0);
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
    return latencies;
  };
  const live = () => coordinator.runner.live.size;
  const integrated = () => ports.store.readRecord().commits.length;
  await until(() => live() === WAVE);
  const idle = await keys(keysPerWave * 2);
  const busy: number[] = [];
  for (let wave = 0; wave < 2; wave++) {
    if (wave > 0) await until(() => live() === WAVE && integrated() >= WAVE);
    writeFileSync(join(dir, `go-${wave}`), '');
    busy.push(...(await keys(keysPerWave)));
  }
  await until(() => existsSync(join(dir, 'go-1')) && integrated() === 2 * WAVE);
  coordinator.stop();
  await finished;
  instance.unmount();
  await host.dispose();
  store.dispose();
  return { idle, busy };
}

export async function keystrokeIntegrating(keys: number): Promise<Figure> {
  const { idle, busy } = await measure(Math.ceil(keys / 2));
  const p95 = percentile(busy, 95);
  return {
    name: 'keystroke_latency_integrating',
    value: p95,
    min: Math.min(...busy),
    max: Math.max(...busy),
    target: 50,
    unit: 'ms p95',
    met: p95 <= 50,
    detail: {
      keys: busy.length,
      lanes_exiting_together: WAVE,
      waves: 2,
      p50_ms: round(median(busy)),
      p95_ms: round(p95),
      baseline_p50_ms: round(median(idle)),
      baseline_p95_ms: round(percentile(idle, 95)),
    },
  };
}
