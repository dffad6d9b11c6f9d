import { join } from 'node:path';
import { batchPorts } from '../src/cli/batch-run/batch-ports.js';
import { createBatch, preflight } from '../src/cli/start/confirm.js';
import { parsePlanText } from '../src/core/plan/plan.js';
import { PtyHost } from '../src/hosts/pty/pty-host.js';
import { findRepo } from '../src/store/state-dir.js';
import { TuiStore } from '../src/tui/tui-store.js';
import { independentPlan, makeRepo, tempDir } from './fixtures.js';
import { driveTui } from './tui-keys.js';
import { p95Figure } from './stats.js';
import type { Figure } from './stats.js';

// 5. keystroke_latency: with 6 lanes each streaming output as fast as it can, the time from
// a key written to the TUI's stdin to the first frame that shows its effect (the selection
// moved). The real Ink renderer (not debug mode, so its frame throttle counts) writes into
// an in-memory terminal. Baseline: the same keys with no lane streaming.

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
  const tui = await driveTui(
    store,
    plan.children.map((c) => c.id),
  );
  await tui.ready;
  const latencies = await tui.keys(keys);
  tui.unmount();
  await host.dispose();
  store.dispose();
  return latencies;
}

export async function keystrokeLatency(keys: number): Promise<Figure> {
  const quiet = await measure(0, keys);
  const busy = await measure(6, keys);
  return p95Figure('keystroke_latency', busy, quiet, 50, { keys, streaming_lanes: 6 });
}
