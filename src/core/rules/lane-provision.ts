// What the steward does with a provision handoff (DESIGN §7). A lane left at the path from
// before a crash is reused only when it is that lane (its branch), clean, and at the base
// or movable there; a free path gets a new worktree unless the lane branch already holds
// commits that are not on the base. Any refusal becomes a setup failure: the tick parks
// the child with that reason, and nothing at the path is touched.

export interface ProvisionWant {
  path: string;
  branch: string;
  base: string;
}

/** What is at the lane's path, as the steward found it. */
export type LaneSpot =
  | { kind: 'worktree'; branch: string | null; head: string | null; clean: boolean }
  | { kind: 'not-a-worktree' }
  /** Nothing at the path; the lane branch's tip (null: no such branch) and whether it is on the base. */
  | { kind: 'free'; branchTip: string | null; tipOnBase: boolean };

export type ProvisionStep =
  | { kind: 'reuse' }
  /** Reuse once moved to the base (Steward.moveToBase); `ifRefused` is the failure then. */
  | { kind: 'move-to-base'; ifRefused: string }
  /** A new worktree; an existing lane branch (all on the base) is reset to the base. */
  | { kind: 'add'; branchExists: boolean }
  | { kind: 'fail'; reason: string };

export function provisionStep(want: ProvisionWant, spot: LaneSpot): ProvisionStep {
  const { path } = want;
  if (spot.kind === 'not-a-worktree')
    return { kind: 'fail', reason: `${path} exists and is not a worktree of this repository` };
  if (spot.kind === 'free') {
    if (spot.branchTip !== null && !spot.tipOnBase)
      return {
        kind: 'fail',
        reason: `branch ${want.branch} already exists with commits that are not on the batch branch`,
      };
    return { kind: 'add', branchExists: spot.branchTip !== null };
  }
  if (spot.branch !== want.branch)
    return { kind: 'fail', reason: `${path} is a worktree on ${spot.branch ?? 'a detached HEAD'}` };
  if (!spot.clean) return { kind: 'fail', reason: `${path} already exists with changes in it` };
  if (spot.head === want.base) return { kind: 'reuse' };
  return { kind: 'move-to-base', ifRefused: `${path} already exists with commits of its own` };
}

/** The reason a failed provision parks the child with (the tick's setup failure). */
export function provisionFailure(reason: string): string {
  return `lane setup failed: ${reason}`;
}

/**
 * An unused lane may move to a new base only along its own line: its HEAD known and on the
 * base (nothing of its own would be left behind). `reset --keep` then refuses by itself
 * when a file it would change has changes of the lane's.
 */
export function mayMoveToBase(head: string | null, headOnBase: boolean): boolean {
  return head !== null && headOnBase;
}
