// A seeded pseudo-random source for the simulation (bench/sim): the same seed draws the
// same executor times and the same QA verdicts, so a run repeats exactly (but for the
// writer's measured service times, which are real).

/** mulberry32: 32 bits of state, uniform in [0, 1). Small, fast and good enough for a model. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A standard normal draw (Box–Muller, one of the pair). */
export function normal(random: () => number): number {
  const u = 1 - random(); // (0, 1]: log(0) never happens
  const v = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/** A lognormal draw with this median and shape: heavy-tailed, as agent run times are. */
export function lognormal(random: () => number, median: number, sigma: number): number {
  return median * Math.exp(sigma * normal(random));
}
