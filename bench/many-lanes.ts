import { writeFileSync } from 'node:fs';
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
import { percentile, round } from './stats.js';
import type { Figure } from './stats.js';

// many_lanes: one coordinator and one TUI (in one process, as `lanes start` runs them, pty
// lanes, a 160x48 screen) with 100 local `script` lanes at once. Each lane sleeps a second at
// a time and prints a line every five, until the bench writes the go file; then it writes
// its file and exits, and the batch integrates them. Figures: keystroke latency (j/k, each
// timed to the frame that shows the moved selection, the keys walking the lane list) while
// the 100 run and while they integrate; the process's peak RSS (sampled every 250 ms); the
// process's CPU from the go file until all are integrated (the ticks and the loop's other
// work: the TUI, the ptys, git's helper excluded), per lane and per report and lane.

const LANES = 100;

function plan(go: string): string {
  return JSON.stringify({
    batch: 'many',
    max_parallel: LANES,
    executor: 'script',
    children: Array.from({ length: LANES }, (_, i) => {
      const id = `L${String(i + 1).padStart(3, '0')}`;
      return {
        id,
        goal: `write ${id}`,
        scope: [`files/${id}.txt`],
        acceptance: [{ id: 'ok', run: ['true'] }],
        run: `i=0; while [ ! -f '${go}' ]; do i=$((i+1)); [ $((i % 5)) -eq 0 ] && echo "${id} working $i"; sleep 1; done; mkdir -p files && echo ${i} > files/${id}.txt`,
      };
    }),
  });
}

const until = (ok: () => boolean, what: string, timeoutMs: number) =>
  pollUntil(ok, `many_lanes: ${what}`, { timeoutMs, everyMs: 50 });

export async function manyLanes(keysPerPhase: number): Promise<Figure> {
  const dir = tempDir('lanes-bench-many-');
  const go = join(dir, 'go');
  const repo = await findRepo(await makeRepo(dir));
  const parsed = parsePlanText(plan(go), 'plan.json');
  await createBatch(repo, parsed, await preflight(repo, parsed, {}), new Date());
  const ports = batchPorts(repo, parsed.batch);
  const host = new PtyHost({ cols: 114, rows: 41 }, 1000);
  let rssMax = 0;
  const sampler = setInterval(() => (rssMax = Math.max(rssMax, process.memoryUsage().rss)), 250);
  let reports = 0;
  let timing = false;
  let commits = 0;
  let store: TuiStore | null = null;
  const coordinator = new Coordinator({
    batchId: parsed.batch,
    repoRoot: repo.root,
    ports,
    worktrees: new LaneWorktrees(repo.root),
    config: loadConfig(repo.root),
    host,
    onEvent: (event) => {
      store?.onEvent(event);
      if (event.kind !== 'report') return;
      if (timing) reports++;
      // (once a report, not before every key: the record's read is the bench's own work)
      commits = ports.store.readRecord().commits.length;
    },
  });
  store = new TuiStore(ports.store, parsed, coordinator);
  const tui = await driveTui(
    store,
    parsed.children.map((c) => c.id),
  );
  const started = Date.now();
  const finished = coordinator.run();
  await tui.ready;
  const live = () => coordinator.runner.live.size;
  const integrated = () => commits;
  await until(() => live() === LANES, `${LANES} lanes running`, 300_000);
  const launchedS = (Date.now() - started) / 1000;
  const running = await tui.keys(keysPerPhase);
  timing = true;
  const cpuBefore = process.cpuUsage();
  writeFileSync(go, '');
  const integrating = await tui.keys(keysPerPhase, () => integrated() < LANES);
  await until(() => integrated() === LANES, 'the batch integrated', 600_000);
  const cpu = process.cpuUsage(cpuBefore);
  const completedS = (Date.now() - started) / 1000;
  const state = ports.store.readRecord().batch_state;
  coordinator.stop();
  await finished;
  clearInterval(sampler);
  tui.unmount();
  await host.dispose();
  store.dispose();
  const all = [...running, ...integrating];
  const p95 = percentile(all, 95);
  const p95Running = round(percentile(running, 95));
  const p95Integrating = integrating.length ? round(percentile(integrating, 95)) : null;
  const rssMb = rssMax / 1024 / 1024;
  const cpuMs = (cpu.user + cpu.system) / 1000;
  const cpuPerLane = round(cpuMs / LANES);
  const cpuPerReportLane = round(cpuMs / Math.max(1, reports) / LANES);
  console.log(
    `many_lanes_detail: ${LANES} lanes; keys p95 running ${p95Running} ms, integrating ${p95Integrating ?? '-'} ms; RSS peak ${round(rssMb)} MB (target 400); tick CPU a lane ${cpuPerLane} ms (${cpuPerReportLane} ms a report and lane); ${state} after ${round(completedS)} s`,
  );
  return {
    name: 'many_lanes',
    value: p95,
    min: Math.min(...all),
    max: Math.max(...all),
    target: 50,
    unit: 'ms p95',
    met: p95 <= 50 && rssMb <= 400 && integrated() === LANES,
    detail: {
      lanes: LANES,
      keys_running: running.length,
      keys_integrating: integrating.length,
      p95_running_ms: p95Running,
      p95_integrating_ms: p95Integrating,
      rss_peak_mb: round(rssMb),
      rss_target_mb: 400,
      cpu_ms_integrating: round(cpuMs),
      cpu_ms_per_lane_integrated: cpuPerLane,
      reports_integrating: reports,
      cpu_ms_per_report_per_lane: cpuPerReportLane,
      all_running_after_s: round(launchedS),
      integrated_after_s: round(completedS),
      batch_state: state,
    },
  };
}
