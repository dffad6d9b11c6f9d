import type { CheckRun, KernelRecord } from './kernel.js';
import type { AcceptanceCheck, Plan } from './plan.js';
import type { BatchRecord } from './record.js';
import type { Report } from './report.js';
import type { ReworkOutcome } from './rework-onto-head.js';

// The ports the core runner works through. Adapters: src/store (files), src/git (git
// plumbing), src/qa/check-runner (QA processes). Tests may pass their own.

export type KernelRead =
  { kind: 'missing' } | { kind: 'unreadable'; why: string } | { kind: 'ok'; record: KernelRecord };

export interface StorePort {
  readRecord(): BatchRecord;
  writeRecord(record: BatchRecord): void;
  readPlan(): Plan;
  writePlan(plan: Plan): void;
  writeReport(report: Report): void;
  journal(event: string, fields?: Record<string, unknown>): void;
  readKernel(taskId: string): KernelRead;
  writeKernel(record: KernelRecord): void;
  qaLogPath(taskId: string, qaRun: number, checkId: string): string;
  scratchDir(): string;
  /** Where a re-verification's output goes (kept in the child's logs, shown by `l`). */
  integrationLogPath(taskId: string, candidate: string, name: string): string;
  /** The folder of a child's logs: executor transcripts and prompts, QA and setup logs. */
  logDir(taskId: string): string;
}

/** A request left by `lanes drop` / `lanes cancel` for the coordinator that runs the batch. */
export type WayOutRequest =
  { action: 'drop'; task_id: string; reason: string } | { action: 'cancel'; reason: string };

/**
 * What the coordinator needs of the store beyond the tick's: the requests other terminals
 * leave, where dropped lanes go, and a name for the batch's hook socket.
 */
export interface CoordinatorStorePort extends StorePort {
  readonly batchId: string;
  /** Unique to this batch in this state directory: the hook channel's socket is named after it. */
  channelName(): string;
  /** The requests waiting, oldest first (an unreadable one is removed). */
  pendingRequests(): { file: string; request: WayOutRequest }[];
  /** Done with a request: its file goes (the command that left it waits for that). */
  removeRequest(file: string): void;
  /** The folder the worktrees of dropped children are moved into. */
  trashDir(): string;
  /** Writes a report that writeReport held back (a running batch's, rewritten at most so often). */
  flushReport(): void;
}

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
  realpath(path: string): string | null;
  /**
   * The worktree at `path` (compared real), or undefined when none is there; among `listed`
   * (a `list()` the caller made already, for several paths) when given.
   */
  at(path: string, listed?: readonly WorktreeInfo[]): Promise<WorktreeInfo | undefined>;
  exists(path: string): boolean;
  /** Nothing changed, staged or untracked (a lane not checked out yet: nothing in it at all). */
  isClean(path: string): Promise<boolean>;
  /**
   * A lane made without a checkout (add with `checkout` false) and still holding nothing but
   * its `.git` file: resetKeep checks it out.
   */
  isUnpopulated(path: string): boolean;
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
  branchAt(path: string): string | null;
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
  /** Commits everything in the worktree onto its own branch (nothing lost when it goes): the new tip. */
  keepWork(path: string, branch: string): Promise<string>;
  /** `git worktree move` (it stays a worktree one can open); the folders above `to` are made. */
  move(path: string, to: string): Promise<void>;
}

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
   * Merges `head` into the lane's work (its branch tip plus what is uncommitted), in the
   * lane: the branch gets a merge commit of both (the old tip stays its ancestor), the
   * work tree its tree — with conflict markers in the conflicting files. Done already
   * (the tip is that merge) → the same answer again.
   */
  reworkLane(
    lanePath: string,
    branch: string,
    head: string,
    ids: { batch: string; task: string },
  ): Promise<ReworkOutcome>;
  /** Which of these lane files still hold conflict markers. */
  conflictMarkers(lanePath: string, paths: readonly string[]): Promise<string[]>;
}

export interface QaPort {
  runChecks(
    cwd: string,
    checks: readonly AcceptanceCheck[],
    logPathFor: (check: AcceptanceCheck) => string | null,
  ): Promise<CheckRun[]>;
  /** Readies a scratch checkout like a lane (copy_files, setup): null, or why it failed. */
  prepare?(dir: string, logPathFor: (name: string) => string): Promise<string | null>;
}

/** What the final verification needs beyond the GitPort (docs/DECISIONS.md "Final verification"). */
export interface FinalPort {
  /** Runs the checks in a scratch checkout of `commit` (files copied, setup run); output kept in the logs. */
  runChecks(commit: string, checks: readonly AcceptanceCheck[], label: string): Promise<CheckRun[]>;
  /** The tree of `head` plus the change laneBase→laneCommit (a cherry-pick by merge-tree), or the conflicts. */
  replayTree(
    head: string,
    laneBase: string,
    laneCommit: string,
  ): Promise<{ tree: string } | { conflicts: string[] }>;
  /** Points `ref` at `commit` (no compare: the ref is lanes' own). */
  keepRef(ref: string, commit: string): Promise<void>;
  dropRef(ref: string): Promise<void>;
  /** Puts an evicted lane back to fix: the worktree at `path` on its branch at the lane base, the lane commit's change uncommitted in it. */
  restoreLane(lane: { path: string; branch: string; base_head: string; lane_commit: string }): Promise<void>;
  /** Takes a skipped dependent's lane away: its lane commit kept under `keep`, the worktree (if clean) and branch removed. */
  retireLane(lane: { path: string; branch: string; lane_commit: string | null }, keep: string): Promise<void>;
}

export interface Clock {
  now(): Date;
}

export interface TickPorts {
  store: StorePort;
  git: GitPort;
  qa: QaPort;
  clock: Clock;
  newRunId(): string;
  /** `integration_checks: all` in the config re-verifies every integration. */
  integrationChecks: 'changed' | 'all';
  /** The config's `final_checks`, used when the plan has none. */
  finalChecks?: readonly AcceptanceCheck[];
  /** Needed when the batch has final checks. */
  final?: FinalPort;
  /** Called at named points after a git mutation and before the write that records it. */
  crashPoint(name: string, detail?: string): void;
  /**
   * The tick's integrations have moved the batch branch to `head` (`integrated` children, so
   * as many slots free): lanes waiting to be admitted can be brought to it while the tick
   * goes on (the coordinator's lane jobs, DESIGN §7).
   */
  headMoved?(head: string, integrated: number): void;
}
