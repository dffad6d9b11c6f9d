// The lane worktrees as the coordinator sees them (adapter: src/git/ports/lane-worktrees.ts).

export interface WorktreeInfo {
  path: string;
  head: string | null;
  /** Short branch name, or null when detached. */
  branch: string | null;
}

/**
 * The lane worktrees as the steward, the lane watch and the coordinator see them (adapter:
 * src/git/lane-worktrees.ts). The rules about them are the core's (lane-provision.ts,
 * lane-release.ts, lane-health.ts); this only reads and changes worktrees.
 */
export interface WorktreePort {
  list(): Promise<WorktreeInfo[]>;
  /** The real path (symlinks resolved), or null when nothing is there. */
  realpath(path: string): Promise<string | null>;
  /**
   * The worktree at `path` (compared real), or undefined when none is there; among `listed`
   * (a `list()` the caller made already, for several paths) when given.
   */
  at(path: string, listed?: readonly WorktreeInfo[]): Promise<WorktreeInfo | undefined>;
  exists(path: string): Promise<boolean>;
  /** Nothing changed, staged or untracked (a lane not checked out yet: nothing in it at all). */
  isClean(path: string): Promise<boolean>;
  /**
   * A lane made without a checkout (add with `checkout` false) and still holding nothing but
   * its `.git` file: resetKeep checks it out.
   */
  isUnpopulated(path: string): Promise<boolean>;
  /** The commit a local branch points at, or null when there is no such branch. */
  branchTip(branch: string): Promise<string | null>;
  /** `commit` is `tip` or one of its ancestors. */
  onBranch(commit: string, tip: string): Promise<boolean>;
  /** The commit a worktree's HEAD is at, or null. */
  headOf(path: string): Promise<string | null>;
  /**
   * `git worktree add` of `branch` at `base` (the branch made, or reset when it exists): null,
   * or why not. `checkout` false: nothing checked out (isUnpopulated) until resetKeep.
   */
  add(
    path: string,
    branch: string,
    base: string,
    branchExists: boolean,
    checkout?: boolean,
  ): Promise<string | null>;
  /**
   * Moves the worktree's branch to `base`, keeping nothing of its own in the way: false when
   * refused. A lane not checked out yet is checked out at `base`.
   */
  resetKeep(path: string, base: string): Promise<boolean>;
  /** Detaches the worktree (when there still is one) and deletes its branch. */
  deleteBranch(path: string, branch: string): Promise<void>;
  /** The branch a worktree is on (read from its files), or null when detached or not a linked worktree. */
  branchAt(path: string): Promise<string | null>;
  /**
   * Undoes deleteBranch for a worktree that stays, only as it was: still detached at `tip`,
   * the branch made again there (unless it was made again meanwhile elsewhere) and the
   * worktree put back on it. False when it was left as it is.
   */
  restoreBranch(path: string, branch: string, tip: string): Promise<boolean>;
  /**
   * `git worktree remove`: without --force, unless the lane has nothing to lose (not checked
   * out yet, or proven clean from its files): null, or why it failed.
   */
  remove(path: string): Promise<string | null>;
  /** What the lane watch compares: a fingerprint of the lane's files and the paths changed since `base`. */
  lookAtFiles(path: string, base: string): Promise<{ fingerprint: string; changed: string[] }>;
  /** The paths changed since `base` when the executor exited (kept for the tick's QA). */
  changedAtExit(path: string, base: string): Promise<string[]>;
  /**
   * Commits everything in the worktree onto its own branch (nothing lost when it goes): the
   * new tip. A branch someone deleted is made again, its work a commit over `base`.
   */
  keepWork(path: string, branch: string, base: string): Promise<string>;
  /** `git worktree move` (it stays a worktree one can open); the folders above `to` are made. */
  move(path: string, to: string): Promise<void>;
}
