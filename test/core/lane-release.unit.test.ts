import { describe, expect, it } from 'vitest';
import { releaseStep } from '../../src/core/rules/lane-release.js';
import type { ReleaseFacts } from '../../src/core/rules/lane-release.js';

// Whether a release may remove an integrated lane, as the core decides it: no git, no lanes.

const facts = (over: Partial<ReleaseFacts> = {}): ReleaseFacts => ({
  laneExists: true,
  batchTip: 't'.repeat(40),
  integratedOnTip: true,
  keepLaneBranches: false,
  ...over,
});

describe('releaseStep', () => {
  it('removes an integrated lane and its branch', () => {
    expect(releaseStep('a', 'batch/b', facts())).toEqual({ kind: 'remove', deleteBranch: true });
  });

  it('keeps the lane branch when the config says so', () => {
    expect(releaseStep('a', 'batch/b', facts({ keepLaneBranches: true }))).toEqual({
      kind: 'remove',
      deleteBranch: false,
    });
  });

  it('does nothing for a lane removed already (a release repeated after a crash)', () => {
    expect(releaseStep('a', 'batch/b', facts({ laneExists: false, integratedOnTip: false }))).toEqual({
      kind: 'gone',
    });
  });

  it('keeps a lane whose integration is not on the batch branch tip, saying why', () => {
    const kept = { kind: 'keep', why: 'the integration of a is not on batch/b: lane kept' };
    expect(releaseStep('a', 'batch/b', facts({ integratedOnTip: false }))).toEqual(kept);
    expect(releaseStep('a', 'batch/b', facts({ batchTip: null, integratedOnTip: true }))).toEqual(kept);
  });
});
