import { describe, expect, it } from 'vitest';
import { options } from '../../../bench/sim/curve.js';
import { simulate } from '../../../bench/sim/simulate.js';
import type { SimResult } from '../../../bench/sim/simulate.js';

// The machines simulation (bench/sim): the real tick over ports in memory, time simulated.
// A model writer (a fixed service time) makes a run exact; the measured one only times it.

const model = (perIntegrationMs: number) => ({ modelWriter: { perTickMs: 1, perIntegrationMs } });
const exact = ({ tickWallMs: _wall, tickCpuMs: _cpu, ...rest }: SimResult) => rest;

describe('the machines simulation', () => {
  it('repeats exactly for a seed, and draws another batch for another seed', async () => {
    const run = (seed: number) => simulate({ ...options(2, 12), seed, ...model(5) });
    const [a, b, c] = [await run(7), await run(7), await run(8)];
    expect(exact(a)).toStrictEqual(exact(b));
    expect(a.makespanMs).not.toBe(c.makespanMs);
    // Every child integrated, some after a QA failure (a rework in its own lane).
    expect(a.attempts).toBe(12 + a.qaFailures);
    expect(a.qaFailures).toBeGreaterThan(0);
  });

  it('with the measured writer, the same seed draws the same executors and verdicts', async () => {
    const [a, b] = [await simulate(options(2, 12)), await simulate(options(2, 12))];
    expect([a.attempts, a.qaFailures]).toEqual([b.attempts, b.qaFailures]);
    expect(Math.abs(a.makespanMs - b.makespanMs) / a.makespanMs).toBeLessThan(0.001);
    expect(a.tickWallMs).toBeGreaterThan(0);
  });

  it('throughput grows with machines until the single writer is the limit', async () => {
    const at = (machines: number, writerMs: number) =>
      simulate({ ...options(machines, 64), ...model(writerMs) });
    // A fast writer: each doubling of machines adds throughput.
    const fast = [await at(1, 10), await at(2, 10), await at(4, 10)];
    expect(fast[1]!.halfThroughputPerHour).toBeGreaterThan(1.5 * fast[0]!.halfThroughputPerHour);
    expect(fast[2]!.halfThroughputPerHour).toBeGreaterThan(1.5 * fast[1]!.halfThroughputPerHour);
    // A writer taking 2 minutes an integration (30 an hour at most): past what it serves,
    // more machines add nothing, and the writer is busy all the time.
    const slow = [await at(4, 120_000), await at(8, 120_000)];
    for (const r of slow) expect(r.halfThroughputPerHour).toBeLessThanOrEqual(30.5);
    expect(slow[1]!.halfThroughputPerHour).toBeLessThan(1.1 * slow[0]!.halfThroughputPerHour);
    expect(slow[1]!.writerUtilisation).toBeGreaterThan(0.8);
  });
});
