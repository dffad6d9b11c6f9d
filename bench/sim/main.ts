import { performance } from 'node:perf_hooks';
import { curve, curveFigure, curveTable } from './curve.js';
import { gitMsPerIntegration } from './git-cost.js';
import type { Figure } from '../stats.js';

// `node dist/bench/sim/main.js`: the simulation's curve alone (SIM_CHILDREN: children a
// point, default 100; SIM_GIT=0 leaves git's measured share out). `npm run bench` runs it
// as the figure machines_sim.

export async function machinesSim(children: number): Promise<Figure> {
  const t0 = performance.now();
  const gitMs = process.env.SIM_GIT === '0' ? 0 : await gitMsPerIntegration(12);
  const c = await curve(children, gitMs);
  for (const line of curveTable(c)) console.log(line);
  return curveFigure(c, (performance.now() - t0) / 1000);
}

if (process.argv[1] === import.meta.filename) {
  const figure = await machinesSim(Number(process.env.SIM_CHILDREN ?? 100));
  console.log(JSON.stringify(figure.detail.seconds), 's');
  process.exit(0);
}
