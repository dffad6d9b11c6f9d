// Figures as the issue asks: every figure a ratio against a baseline measured in the same
// run, the median of at least 5 runs, with min and max.

export interface Figure {
  name: string;
  /** Median of the per-run ratios (or the absolute value for latency/memory figures). */
  value: number;
  min: number;
  max: number;
  target: number;
  unit: string;
  met: boolean;
  detail: Record<string, unknown>;
  /** Why the figure was not measured here (it is then printed as skipped, not failed). */
  skipped?: string;
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

export function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] as number;
}

/** Ratio figure from paired runs (lanes[i] / baseline[i]). */
export function ratioFigure(
  name: string,
  lanes: number[],
  baseline: number[],
  target: number,
  detail: Record<string, unknown> = {},
): Figure {
  const ratios = lanes.map((x, i) => x / (baseline[i] as number));
  const value = median(ratios);
  return {
    name,
    value,
    min: Math.min(...ratios),
    max: Math.max(...ratios),
    target,
    unit: 'x',
    met: value <= target,
    detail: { lanes_ms: lanes.map(round), baseline_ms: baseline.map(round), ...detail },
  };
}

/** A latency figure: the p95 of `busy` against `targetMs`, with the same keys' `idle` baseline beside it. */
export function p95Figure(
  name: string,
  busy: readonly number[],
  idle: readonly number[],
  targetMs: number,
  detail: Record<string, unknown>,
): Figure {
  const p95 = percentile(busy, 95);
  return {
    name,
    value: p95,
    min: Math.min(...busy),
    max: Math.max(...busy),
    target: targetMs,
    unit: 'ms p95',
    met: p95 <= targetMs,
    detail: {
      ...detail,
      p50_ms: round(median(busy)),
      p95_ms: round(p95),
      baseline_p50_ms: round(median(idle)),
      baseline_p95_ms: round(percentile(idle, 95)),
      ratio_p95_to_baseline: round(p95 / percentile(idle, 95)),
    },
  };
}

export function round(x: number): number {
  return Math.round(x * 100) / 100;
}

export function formatFigure(f: Figure): string {
  if (f.skipped) return `${f.name}: skipped: ${f.skipped}`;
  const v = (x: number) => (f.unit === 'x' ? x.toFixed(2) : `${x.toFixed(1)}`);
  const range = `${f.name}: ${v(f.value)}${f.unit === 'x' ? '' : ` ${f.unit}`} (${v(f.min)}..${v(f.max)})`;
  if (Number.isNaN(f.target)) return `${range} (no target: a figure to watch)`;
  return `${range} target ${f.target}${f.unit === 'x' ? 'x' : ` ${f.unit}`}: ${f.met ? 'met' : 'missed'}`;
}

export async function timeIt(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}
