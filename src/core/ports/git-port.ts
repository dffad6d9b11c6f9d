// The repository as the tick sees it (adapter: src/git/ports/repo-git.ts).

export interface CommitSummary {
  sha: string;
  parents: string[];
  trailers: Record<string, string>;
}

export interface OfferFacts {
  realpath: string | null;
  sameRepository: boolean;
  isWorktreeRoot: boolean;
  branch: string | null;
  head: string | null;
  clean: boolean;
}

/** What is known of a path that is no lane (nothing there, or not looked at): nothing. */
export const NO_FACTS: Readonly<OfferFacts> = Object.freeze({
  realpath: null,
  sameRepository: false,
  isWorktreeRoot: false,
  branch: null,
  head: null,
  clean: false,
});

export interface LaneLook {
  /** The path is a worktree of this repository. */
  present: boolean;
  branch: string | null;
  /** Only read when asked for (it costs a `git status`); false when not asked. */
  clean: boolean;
}

export interface DeliveryIds {
  batch: string;
  task: string;
  run: string;
  base: string;
}

export interface GitPort {
  /** The realpath of the coordinator's own worktree. */
  readonly coordinatorRoot: string;
  branchTip(branch: string): Promise<string | null>;
  isAncestor(ancestor: string, descendant: string): Promise<boolean>;
  commitsBetween(from: string, to: string): Promise<CommitSummary[]>;
  worktreesOnBranch(branch: string): Promise<string[]>;
  offerFacts(path: string): Promise<OfferFacts>;
  lookAtLane(path: string, options?: { clean?: boolean }): Promise<LaneLook>;
  /** Forget what was read about worktrees: the steward may have changed them since. */
  refresh?(): void;
  changedPaths(lanePath: string, base: string): Promise<string[]>;
  findDelivery(lanePath: string, branch: string, ids: DeliveryIds): Promise<string | null>;
  commitDelivery(
    lanePath: string,
    branch: string,
    paths: string[],
    goal: string,
    ids: DeliveryIds,
  ): Promise<string>;
  /**
   * Starts building the delivery of `paths` while QA runs: commitDelivery takes it when
   * none of those files changed meanwhile, else builds it again. Nothing is committed.
   */
  stageDelivery?(lanePath: string, base: string, paths: readonly string[]): Promise<void>;
  /** Brings the lane's index to its delivery commit's tree (the files untouched). */
  syncLaneIndex(lanePath: string, commit: string): Promise<void>;
  /**
   * The three-way merge of the lane commit into `head` (its lane base the merge base).
   * `laneChangeOnly`: the result is known to change head exactly as the lane commit changes
   * its base (sameChange would say so), without asking.
   */
  mergeTree(
    head: string,
    laneCommit: string,
  ): Promise<{ tree: string; laneChangeOnly?: boolean } | { conflicts: string[] }>;
  /** True when head→tree changes exactly what base→laneCommit changes. */
  sameChange(base: string, laneCommit: string, head: string, tree: string): Promise<boolean>;
  /** A commit on `parent` with the lane commit's author and message plus the given trailer lines. */
  integrationCommit(tree: string, parent: string, laneCommit: string, extraTrailers: string): Promise<string>;
  advanceBranch(branch: string, next: string, expected: string): Promise<boolean>;
  withScratchCheckout<T>(commit: string, dir: string, fn: (path: string) => Promise<T>): Promise<T>;
  /**
   * Applies the lane's own change — its work (branch tip plus what is uncommitted) against
   * `ids.base`, the lane's base — three-way onto `head`, in the lane: the branch gets a
   * merge commit of both (the old tip stays its ancestor), the work tree its tree — with
   * conflict markers in the conflicting files. What the base held and the head does not
   * (a sibling taken off the batch) is not carried. Done already → the same answer again.
   */
  reworkLane(
    lanePath: string,
    branch: string,
    head: string,
    ids: { batch: string; task: string; base: string },
  ): Promise<ReworkOutcome>;
  /** Which of these lane files still hold conflict markers. */
  conflictMarkers(lanePath: string, paths: readonly string[]): Promise<string[]>;
}

/** A lane brought onto a new head (GitPort.reworkOntoHead, core/ways-out/rework-onto-head.ts). */
export interface ReworkOutcome {
  /** The new lane tip (a merge of the head and the lane's work). */
  commit: string;
  conflicts: string[];
}
