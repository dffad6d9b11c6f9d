import type { Figure } from '../stats.js';
import { round } from '../stats.js';
import { simulate } from './simulate.js';
import type { SimOptions, SimResult } from './simulate.js';

// The simulation's curve (docs/BENCH.md "Machines, simulated"): one batch over 1–64
// machines of 4 slots, executor times lognormal (median 8 min, sigma 1), 15% of attempts
// failing QA, the writer's service time measured. Then the writer loaded harder: 4
// machines with every time on them k times shorter ask as many integrations an hour as 4k
// machines would (while the batch has more children than slots): where that curve flattens
// is where the single writer is the limit.

export const MACHINES = [1, 2, 4, 8, 16, 32, 64];
export const STRESS_MACHINES = 4;
export const COMPRESSIONS = [1, 10, 100, 1000, 3000, 10_000, 30_000];

export function options(machines: number, children: number, compression = 1): SimOptions {
  return {
    children,
    machines,
    slotsPerMachine: 4,
    seed: 25,
    medianMs: (8 * 60_000) / compression,
    sigma: 1,
    qaFailRate: 0.15,
    provisionMs: 15_000 / compression,
    releaseMs: 2_000 / compression,
  };
}

export interface Curve {
  children: number;
  gitMs: number;
  real: SimResult[];
  /** The stress curve: each run with its compression k (it stands for STRESS_MACHINES × k machines). */
  compressed: { k: number; result: SimResult }[];
  /** The first machine count (stress curve, in machines it stands for) at which the writer is busy 80% of the time, or null. */
  kneeMachines: number | null;
  /** The writer's capacity against what one machine asks of it (children an hour each). */
  estimatedLimitMachines: number;
}

export async function curve(
  children: number,
  gitMs: number,
  machines = MACHINES,
  compressions = COMPRESSIONS,
): Promise<Curve> {
  const real: SimResult[] = [];
  const compressed: Curve['compressed'] = [];
  for (const m of machines)
    real.push(await simulate({ ...options(m, children), gitMsPerIntegration: gitMs }));
  for (const k of compressions) {
    const result = await simulate({ ...options(STRESS_MACHINES, children, k), gitMsPerIntegration: gitMs });
    compressed.push({ k, result });
  }
  let knee: number | null = null;
  // Past 80% the writer's queue, not the machines, sets the pace (the curve bends flat).
  for (const { k, result } of compressed)
    if (knee === null && result.writerUtilisation >= 0.8) knee = STRESS_MACHINES * k;
  // One machine keeps its 4 slots busy the whole batch: its rate is what a machine asks.
  const perMachine = real[0]!.halfThroughputPerHour / real[0]!.machines;
  const busiest = real.at(-1)!;
  const capacity = 3_600_000 / busiest.writerMsPerChild;
  return {
    children,
    gitMs,
    real,
    compressed,
    kneeMachines: knee,
    estimatedLimitMachines: capacity / perMachine,
  };
}

const h = (ms: number) =>
  ms >= 3_600_000 ? `${(ms / 3_600_000).toFixed(2)} h` : `${(ms / 1000).toFixed(1)} s`;

export function curveTable(c: Curve): string[] {
  const head = 'machines  slots  throughput/h  half-batch/h  writer util  writer ms/child  (cpu)    makespan';
  const row = (r: SimResult, machines: number) =>
    [
      String(machines).padStart(8),
      String(r.slots).padStart(6),
      r.throughputPerHour.toFixed(1).padStart(13),
      r.halfThroughputPerHour.toFixed(1).padStart(13),
      `${(r.writerUtilisation * 100).toFixed(2)}%`.padStart(12),
      r.writerMsPerChild.toFixed(1).padStart(16),
      (r.tickCpuMs / r.children).toFixed(1).padStart(6),
      h(r.makespanMs).padStart(11),
    ].join(' ');
  return [
    `machines_sim: ${c.children} children a point, seed 25, git ${c.gitMs.toFixed(2)} ms an integration`,
    head,
    ...c.real.map((r) => row(r, r.machines)),
    `the writer loaded harder: ${STRESS_MACHINES} machines, times on them ÷k; "machines" = ${STRESS_MACHINES}k, the machines they stand for:`,
    head,
    ...c.compressed.map(({ k, result }) => row(result, STRESS_MACHINES * k)),
    `writer limit: busy 80% of the time from ${c.kneeMachines ?? 'no point of the stress curve'} machines on; its capacity at 64 machines' load ÷ one machine's demand ≈ ${Math.round(c.estimatedLimitMachines)} machines`,
  ];
}

export function curveFigure(c: Curve, seconds: number): Figure {
  // The value: the simulated knee (the estimate when the stress curve never loads the
  // writer 80%); min..max: the two ways of finding it.
  const estimate = Math.round(c.estimatedLimitMachines);
  const value = c.kneeMachines ?? estimate;
  return {
    name: 'machines_sim',
    value,
    min: Math.min(value, estimate),
    max: Math.max(value, estimate),
    target: 64,
    unit: 'machines',
    met: value > 64,
    detail: {
      children: c.children,
      seconds: round(seconds),
      git_ms_per_integration: round(c.gitMs),
      knee_machines: c.kneeMachines,
      estimated_limit_machines: estimate,
      curve: c.real.map(rowDetail),
      stress: c.compressed.map(({ k, result }) => ({
        k,
        stands_for_machines: STRESS_MACHINES * k,
        ...rowDetail(result),
      })),
    },
  };
}

function rowDetail(r: SimResult): Record<string, number> {
  return {
    machines: r.machines,
    throughput_per_h: round(r.throughputPerHour),
    half_batch_per_h: round(r.halfThroughputPerHour),
    writer_utilisation: round(r.writerUtilisation * 10000) / 10000,
    writer_ms_per_child: round(r.writerMsPerChild),
    tick_cpu_ms_per_child: round(r.tickCpuMs / r.children),
    makespan_h: round(r.makespanMs / 3_600_000),
    ticks: r.ticks,
    refusals: r.refusals,
    attempts: r.attempts,
    qa_failures: r.qaFailures,
  };
}
