// Attribution by bisection (docs/DECISIONS.md "Final verification"): the integration commits
// c1..cN of a batch whose tip (the prefix of length N) is red and whose base (length 0) is
// taken as green. The state is two prefix lengths, `good` < `bad`; every probe halves the
// distance, so the first red commit is found in ceil(log2 N) runs. The state is plain data:
// it is persisted before each run and a crash resumes at the same probe.

export interface BisectState {
  /** The first `good` commits are known green (0: the base). */
  good: number;
  /** The first `bad` commits are known red. */
  bad: number;
}

export type BisectStep = { kind: 'probe'; prefix: number } | { kind: 'found'; culprit: number };

/** The tip of N integration commits ran red. */
export function startBisect(commits: number): BisectState {
  if (!Number.isInteger(commits) || commits < 1) throw new RangeError(`bisect: ${commits} commits`);
  return { good: 0, bad: commits };
}

/** What to run next: the prefix to probe, or the culprit (its 1-based position) when found. */
export function nextStep(state: BisectState): BisectStep {
  if (state.bad - state.good <= 1) return { kind: 'found', culprit: state.bad };
  return { kind: 'probe', prefix: Math.floor((state.good + state.bad) / 2) };
}

/** The state after the probe of `prefix` ran green (`passed`) or red. */
export function afterProbe(state: BisectState, prefix: number, passed: boolean): BisectState {
  if (!(prefix > state.good && prefix < state.bad))
    throw new RangeError(`bisect: probe ${prefix} is outside (${state.good}, ${state.bad})`);
  return passed ? { good: prefix, bad: state.bad } : { good: state.good, bad: prefix };
}

/** The most probes a bisection of N commits makes. */
export function maxProbes(commits: number): number {
  return commits <= 1 ? 0 : Math.ceil(Math.log2(commits));
}
