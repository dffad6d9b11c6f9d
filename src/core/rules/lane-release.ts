// Whether a release may remove an integrated lane (DESIGN §7): never work that is not on
// the batch branch. The worktree goes only when its integration commit is on the batch
// branch's tip (and `git worktree remove` without --force refuses a lane with changes);
// its branch goes first unless the config keeps lane branches.

export interface ReleaseFacts {
  laneExists: boolean;
  /** The batch branch's tip, or null when the branch is gone. */
  batchTip: string | null;
  /** The integration commit is the tip or one of its ancestors. */
  integratedOnTip: boolean;
  keepLaneBranches: boolean;
}

export type ReleaseStep =
  /** Removed already (a release repeated after a crash): nothing to do. */
  | { kind: 'gone' }
  /** Kept, and why (told to the user). */
  | { kind: 'keep'; why: string }
  | { kind: 'remove'; deleteBranch: boolean };

export function releaseStep(task: string, batchBranch: string, facts: ReleaseFacts): ReleaseStep {
  if (!facts.laneExists) return { kind: 'gone' };
  if (facts.batchTip === null || !facts.integratedOnTip)
    return { kind: 'keep', why: `the integration of ${task} is not on ${batchBranch}: lane kept` };
  return { kind: 'remove', deleteBranch: !facts.keepLaneBranches };
}
