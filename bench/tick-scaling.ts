import { join } from 'node:path';
import { execa } from 'execa';
import { batchPorts } from '../src/cli/batch-run/batch-ports.js';
import { createBatch, preflight } from '../src/cli/start/confirm.js';
import { parsePlanText } from '../src/core/plan/plan.js';
import { tick } from '../src/core/tick/tick.js';
import { findRepo } from '../src/store/state-dir.js';
import { independentPlan, makeRepo, tempDir } from './fixtures.js';
import { median, ratioFigure, timeIt } from './stats.js';
import type { Figure } from './stats.js';

// 2. tick_scaling: one idle tick (nothing to do) on a 10-child batch against one on a
// 1000-child batch, both with 4 lanes in flight. A tick must not run git per child that
// has nothing in flight, so the ratio should stay near 1.

const IN_FLIGHT = 4;

async function batchWithLanesInFlight(n: number) {
  const dir = tempDir('lanes-bench-tick-');
  const repoDir = await makeRepo(dir);
  const repo = await findRepo(repoDir);
  const plan = parsePlanText(JSON.stringify(independentPlan(`t${n}`, n, IN_FLIGHT)), 'plan.json');
  await createBatch(repo, plan, await preflight(repo, plan, {}), new Date());
  const ports = batchPorts(repo, plan.batch);
  const first = await tick(ports, {});
  const offers = [];
  for (const h of first.handoffs) {
    if (h.action !== 'provision') continue;
    const path = join(dir, 'lanes', h.task_id);
    await execa('git', ['-C', repoDir, 'worktree', 'add', '-q', '-b', h.lane_branch, path, h.base_head]);
    offers.push({ task_id: h.task_id, path });
  }
  const admitted = await tick(ports, { offers });
  const executors = admitted.handoffs.filter((h) => h.action === 'executor').length;
  if (executors !== IN_FLIGHT) throw new Error(`expected ${IN_FLIGHT} lanes in flight, got ${executors}`);
  return ports;
}

export async function tickScaling(runs: number): Promise<Figure> {
  const small = await batchWithLanesInFlight(10);
  const large = await batchWithLanesInFlight(1000);
  // Warm both once (module caches, git's own caches).
  await tick(small, {});
  await tick(large, {});
  const lanes: number[] = [];
  const baseline: number[] = [];
  for (let i = 0; i < runs; i++) {
    baseline.push(await timeIt(() => tick(small, {})));
    lanes.push(await timeIt(() => tick(large, {})));
  }
  return ratioFigure('tick_scaling', lanes, baseline, 3, {
    small_children: 10,
    large_children: 1000,
    in_flight: IN_FLIGHT,
    small_median_ms: median(baseline),
    large_median_ms: median(lanes),
  });
}
