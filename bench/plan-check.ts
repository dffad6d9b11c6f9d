import { join } from 'node:path';
import { execa } from 'execa';
import { CLI, tempDir, writeJson } from './fixtures.js';
import { ratioFigure, timeIt } from './stats.js';
import type { Figure } from './stats.js';

// 3. plan_check: `lanes plan check` on a 500-child plan against `node -e ''` (process start).

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
  for (let i = 0; i < runs; i++) {
    baseline.push(await timeIt(() => execa(process.execPath, ['-e', ''])));
    lanes.push(
      await timeIt(async () => {
        const r = await execa(process.execPath, [CLI, 'plan', 'check', plan], { reject: false });
        if (r.exitCode !== 0) throw new Error(`plan check failed: ${r.stderr}`);
      }),
    );
  }
  return ratioFigure('plan_check', lanes, baseline, 3, { children: n });
}
