import { join } from 'node:path';
import { execa } from 'execa';
import { CLI, tempDir, writeJson } from './fixtures.js';
import { median, ratioFigure, round, timeIt } from './stats.js';
import type { Figure } from './stats.js';

// 3. plan_check: `lanes plan check` on a 500-child plan against the bare start of lanes,
// `lanes --version` (issue 28's baseline; target 2x), with `node -e ''` beside it in the
// detail (the ratio to a bare node: `ratio_to_node`).

function bigPlan(n: number): object {
  return {
    batch: 'big',
    max_parallel: 8,
    children: Array.from({ length: n }, (_, i) => ({
      id: `t${i}`,
      goal: `task ${i}`,
      // Two dependency levels mixed in, and scopes that sometimes overlap.
      blocked_by: i >= 10 && i % 3 === 0 ? [`t${i - 10}`] : [],
      scope: [`src/m${i % 50}/f${i}.ts`, `test/m${i % 50}/**`],
      acceptance: [{ id: 'a', run: ['npm', 'test', '--', `test/m${i % 50}`] }],
    })),
  };
}

export async function planCheck(n: number, runs: number): Promise<Figure> {
  const plan = writeJson(join(tempDir('lanes-bench-plan-'), 'plan.json'), bigPlan(n));
  const lanes: number[] = [];
  const baseline: number[] = [];
  const node: number[] = [];
  for (let i = 0; i < runs; i++) {
    node.push(await timeIt(() => execa(process.execPath, ['-e', ''])));
    baseline.push(await timeIt(() => execa(process.execPath, [CLI, '--version'])));
    lanes.push(
      await timeIt(async () => {
        const r = await execa(process.execPath, [CLI, 'plan', 'check', plan], { reject: false });
        if (r.exitCode !== 0) throw new Error(`plan check failed: ${r.stderr}`);
      }),
    );
  }
  return ratioFigure('plan_check', lanes, baseline, 2, {
    children: n,
    baseline: 'lanes --version',
    node_ms: node.map(round),
    ratio_to_node: round(median(lanes) / median(node)),
  });
}
