import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { integrationOverhead } from './integration-overhead.js';
import { keystrokeIntegrating } from './keystroke-integrating.js';
import { keystrokeLatency } from './keystroke-latency.js';
import { memory } from './memory.js';
import { paneEndToEnd } from './pane-end-to-end.js';
import { paneTerminal } from './pane-terminal.js';
import { paneThroughput } from './pane-throughput.js';
import { planCheck } from './plan-check.js';
import { firstFrame } from './first-frame.js';
import { inOwnProcess } from './own-process.js';
import { finalBisectRuns, rebuild64 } from './final-verification.js';
import { formatFigure } from './stats.js';
import type { Figure } from './stats.js';
import { tickScaling } from './tick-scaling.js';
import { machinesSim } from './sim/main.js';
import { remoteLaneOverhead, sshProcessesPerLane } from './remote-lane.js';

// `npm run bench`: one line per figure, and bench/results.json. A benchmark, not a test:
// nothing in `npm test` depends on these numbers. BENCH_QUICK=1 shrinks every figure for
// a smoke run (the figures it prints are not the ones to quote).

const quick = process.env.BENCH_QUICK === '1';
const RUNS = quick ? 2 : 5;
const only = process.env.BENCH_ONLY?.split(',');

const figures: [string, () => Promise<Figure>][] = [
  // (9 pairs, not 5: a pair takes ~3 s, and this machine's speed drifts by ±15 % within a
  // minute; the median of 9 ratios moves less with it)
  ['integration_overhead', () => integrationOverhead(quick ? 8 : 60, quick ? RUNS : 9)],
  ['tick_scaling', () => tickScaling(quick ? 3 : 7)],
  ['plan_check', () => planCheck(500, quick ? 3 : 7)],
  ['first_frame', () => firstFrame(quick ? 3 : 7)],
  ['pane_throughput', () => paneThroughput(quick ? 2 : 20, RUNS)],
  ['pane_throughput_end_to_end', () => paneEndToEnd(quick ? 2 : 20, RUNS)],
  ['pane_throughput_terminal', () => paneTerminal(quick ? 2 : 20, RUNS)],
  ['keystroke_latency', () => keystrokeLatency(quick ? 20 : 100)],
  ['keystroke_latency_integrating', () => keystrokeIntegrating(quick ? 20 : 100)],
  ['memory', () => memory(quick ? 1 : 5)],
  // (in a process of its own: its RSS figure is the coordinator's, not the bench's)
  ['many_lanes', () => inOwnProcess('many_lanes', quick ? 20 : 50)],
  ['final_bisect_runs', () => finalBisectRuns(quick ? [17] : [1, 17, 33, 48, 64])],
  ['rebuild_64', () => rebuild64(RUNS)],
  ['machines_sim', () => machinesSim(quick ? 40 : 100)],
  ['remote_lane_overhead', () => remoteLaneOverhead(quick ? 2 : 5)],
  ['ssh_processes_per_lane', () => sshProcessesPerLane(quick ? [1, 2] : [1, 4])],
];

const results: Figure[] = [];
const started = Date.now();
for (const [name, measure] of figures) {
  if (only && !only.includes(name)) continue;
  try {
    const figure = await measure();
    results.push(figure);
    console.log(formatFigure(figure));
  } catch (error) {
    console.log(`${name}: failed: ${(error as Error).message}`);
    results.push({
      name,
      value: NaN,
      min: NaN,
      max: NaN,
      target: NaN,
      unit: '',
      met: false,
      detail: { error: String(error) },
    });
  }
}
const out = join(import.meta.dirname, '..', '..', 'bench', 'results.json');
writeFileSync(
  out,
  `${JSON.stringify({ measured_at: new Date().toISOString(), quick, seconds: Math.round((Date.now() - started) / 1000), figures: results }, null, 2)}\n`,
);
console.log(`wrote ${out} in ${Math.round((Date.now() - started) / 1000)} s`);
process.exit(0);
