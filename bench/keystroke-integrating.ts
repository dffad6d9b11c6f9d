import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { batchPorts } from '../src/cli/batch-run/batch-ports.js';
import { LaneWorktrees } from '../src/git/ports/lane-worktrees.js';
import { createBatch, preflight } from '../src/cli/start/confirm.js';
import { Coordinator } from '../src/coordinator/loop/coordinator.js';
import { loadConfig } from '../src/store/config-file.js';
import { parsePlanText } from '../src/core/plan/plan.js';
import { PtyHost } from '../src/hosts/pty/pty-host.js';
import { findRepo } from '../src/store/state-dir.js';
import { TuiStore } from '../src/tui/tui-store.js';
import { driveTui } from './tui-keys.js';
import { makeRepo, pollUntil, tempDir } from './fixtures.js';
import { p95Figure } from './stats.js';
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

const until = (ok: () => boolean) =>
  pollUntil(ok, 'keystroke_latency_integrating: a wave', { timeoutMs: 600_000, everyMs: 20 });

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
  // (the keys move among the first wave's lanes)
  const tui = await driveTui(
    store,
    parsed.children.slice(0, WAVE).map((c) => c.id),
  );
  const finished = coordinator.run();
  await tui.ready;
  const keys = tui.keys;
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
  tui.unmount();
  await host.dispose();
  store.dispose();
  return { idle, busy };
}

export async function keystrokeIntegrating(keys: number): Promise<Figure> {
  const { idle, busy } = await measure(Math.ceil(keys / 2));
  return p95Figure('keystroke_latency_integrating', busy, idle, 50, {
    keys: busy.length,
    lanes_exiting_together: WAVE,
    waves: 2,
  });
}
