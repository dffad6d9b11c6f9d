import type { BatchState } from '../records/record.js';

// Landing a completed batch (docs/DECISIONS.md "Landing"): what `lanes land` does with the
// branch it lands on, decided from facts git read. Never a change to a worktree with
// changes in it, never a merge unless asked, never anything while the batch is not done.

export interface LandFacts {
  batchId: string;
  batchState: BatchState;
  batchBranch: string;
  batchTip: string;
  into: string;
  /** null: there is no such branch. */
  intoTip: string | null;
  /** The branch's tip is an ancestor of (or equal to) the batch tip: a fast-forward. */
  canFastForward: boolean;
  /** The batch tip is already on the branch. */
  alreadyLanded: boolean;
  merge: boolean;
  /** The worktree that has the branch checked out, if any, and whether it has changes. */
  checkedOut: { path: string; clean: boolean } | null;
}

export type LandDecision =
  { kind: 'already' } | { kind: 'fast_forward' } | { kind: 'merge' } | { kind: 'refuse'; reason: string };

export function decideLand(f: LandFacts): LandDecision {
  const refuse = (reason: string): LandDecision => ({ kind: 'refuse', reason });
  if (f.batchState !== 'completed')
    return refuse(`batch ${f.batchId} is ${f.batchState}, not completed: only a completed batch lands`);
  if (f.into === f.batchBranch) return refuse(`--into ${f.into}: that is the batch branch itself`);
  if (f.intoTip === null) return refuse(`there is no branch "${f.into}" to land on`);
  if (f.alreadyLanded) return { kind: 'already' };
  if (f.checkedOut && !f.checkedOut.clean)
    return refuse(
      `${f.into} is checked out in ${f.checkedOut.path}, which has changes: commit or stash them first (nothing was changed)`,
    );
  if (f.canFastForward) return { kind: 'fast_forward' };
  if (f.merge) return { kind: 'merge' };
  return refuse(
    `${f.into} has moved since the batch started (${f.batchBranch} does not contain its tip ${f.intoTip.slice(0, 12)}): use --merge to land with a merge commit (nothing was changed)`,
  );
}

export interface PushFacts {
  remote: string;
  into: string;
  /** The remote's value of the branch (null: the remote has no such branch). */
  remoteTip: string | null;
  /** The remote's value is an ancestor of what would be pushed (or it is absent). */
  remoteContained: boolean;
}

/** A push with a lease on the remote's old value, refused when it would drop remote commits. */
export function decidePush(f: PushFacts): { kind: 'push' } | { kind: 'refuse'; reason: string } {
  if (f.remoteTip !== null && !f.remoteContained)
    return {
      kind: 'refuse',
      reason: `${f.remote}/${f.into} is at ${f.remoteTip.slice(0, 12)}, which the landed ${f.into} does not contain: fetch and land again`,
    };
  return { kind: 'push' };
}

/** Which branch `land` lands on by default: the plan's base when it names a branch. */
export function defaultInto(planBase: string, currentBranch: string | null): string | null {
  if (planBase === 'HEAD') return currentBranch;
  return planBase.replace(/^refs\/heads\//, '');
}
