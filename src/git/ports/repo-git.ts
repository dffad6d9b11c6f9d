import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { CommitSummary, DeliveryIds, GitPort, LaneLook, OfferFacts } from '../../core/ports/git-port.js';
import { cleanMerge, commitsBetween, sameChange } from '../runner/commits.js';
import { disjointMerge } from '../delivery/disjoint-merge.js';
import { takeExitTree } from '../delivery/exit-tree.js';
import { personLine } from '../runner/commit-writer.js';
import {
  buildDeliveryTree,
  commitDelivery,
  dropDeliveryTree,
  findDelivery,
  syncLaneIndex,
} from '../delivery/delivery.js';
import type { DeliveryTree } from '../delivery/delivery.js';
import { conflictMarkers, reworkLane } from '../delivery/lane-work.js';
import type { ReworkOutcome } from '../../core/ports/git-port.js';
import { git } from '../runner/git.js';
import { RepoSessions } from '../runner/repo-sessions.js';
import { treeChanges } from '../worktree/tree-diff.js';
import { linkedGitDir, worktreesFromFiles } from '../worktree/worktree-files.js';
import {
  findWorktree,
  inspectLane,
  isClean,
  listWorktrees,
  realpathOrNull,
  takeChangedPaths,
} from '../worktree/worktrees.js';
import type { WorktreeEntry } from '../worktree/worktrees.js';

// The GitPort over a real repository: plumbing only, never the user's work tree or index.
// Reads, ref moves and commit objects go through the repository's long-lived git
// processes (RepoSessions); a process per call only where git has no such mode (status,
// merge-tree, the delivery's index, worktrees): docs/DECISIONS.md "Git speed".

export class RepoGit implements GitPort {
  readonly coordinatorRoot: string;
  private readonly sessions: RepoSessions;
  /** Each lane's delivery commit whose tree its index is (the delivery put it there, or a sync). */
  private readonly synced = new Map<string, string>();
  /** Delivery trees built while QA runs (stageDelivery), by lane path: taken by the commit. */
  private readonly early = new Map<string, Promise<DeliveryTree>>();

  constructor(
    /** The coordinator's worktree (where lanes runs). */
    readonly root: string,
    readonly commonDir: string,
  ) {
    this.coordinatorRoot = realpathOrNull(root) ?? root;
    this.sessions = RepoSessions.of(root);
  }

  branchTip(branch: string): Promise<string | null> {
    return this.sessions.branchTip(branch);
  }

  isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    return this.sessions.isAncestor(ancestor, descendant); // (X is its own ancestor: no read)
  }

  commitsBetween(from: string, to: string): Promise<CommitSummary[]> {
    return commitsBetween(this.root, from, to);
  }

  /** One reading of the worktrees' files per tick answers "is this lane there, on which branch" for every lane. */
  private worktrees: Promise<WorktreeEntry[]> | null = null;

  refresh(): void {
    this.worktrees = null;
  }

  private listed(): Promise<WorktreeEntry[]> {
    this.worktrees ??= Promise.resolve(worktreesFromFiles(this.commonDir)).then(
      (read) => read ?? listWorktrees(this.root),
    );
    return this.worktrees;
  }

  async worktreesOnBranch(branch: string): Promise<string[]> {
    return (await this.listed()).filter((w) => w.branch === branch).map((w) => w.path);
  }

  offerFacts(path: string): Promise<OfferFacts> {
    // (one status for a linked worktree: worktrees.ts)
    return inspectLane(path, this.commonDir);
  }

  async lookAtLane(path: string, options: { clean?: boolean } = {}): Promise<LaneLook> {
    const entry = findWorktree(await this.listed(), path);
    // A worktree git still lists but whose folder is gone is not present.
    const gone = { present: false, branch: null, clean: false };
    if (!entry || !existsSync(path)) return gone;
    if (!options.clean) return { present: true, branch: entry.branch, clean: false };
    try {
      return { present: true, branch: entry.branch, clean: await isClean(path) };
    } catch (error) {
      // Being removed while git looked (its release runs beside the tick): gone, as the next
      // look says once `git worktree remove` is through.
      const admin = linkedGitDir(path);
      if (admin === null || !existsSync(admin)) return gone;
      throw error;
    }
  }

  changedPaths(lanePath: string, base: string): Promise<string[]> {
    return takeChangedPaths(lanePath, base);
  }

  findDelivery(_lanePath: string, branch: string, ids: DeliveryIds): Promise<string | null> {
    return findDelivery(this.sessions, branch, ids);
  }

  async commitDelivery(
    lanePath: string,
    branch: string,
    paths: string[],
    goal: string,
    ids: DeliveryIds,
  ): Promise<string> {
    const early = this.early.get(lanePath) ?? null;
    this.early.delete(lanePath);
    const made = await commitDelivery(this.sessions, lanePath, branch, paths, goal, ids, early);
    if (made.indexSynced) this.synced.set(lanePath, made.commit);
    return made.commit;
  }

  /** (Resolves once the tree is built, or failed: a failure is the commit's to meet, building it again.) */
  stageDelivery(lanePath: string, base: string, paths: readonly string[]): Promise<void> {
    // (after one still being built for the lane: they share its private index)
    const before = this.early.get(lanePath)?.then(dropDeliveryTree, () => {}) ?? Promise.resolve();
    // (the tree of the whole lane read at the exit, when it is all the delivery's: no process)
    const atExit = takeExitTree(lanePath, base, paths);
    const building = before.then(() => atExit ?? buildDeliveryTree(lanePath, base, paths));
    this.early.set(lanePath, building);
    return building.then(
      () => {},
      () => {},
    );
  }

  async syncLaneIndex(lanePath: string, commit: string): Promise<void> {
    if (this.synced.get(lanePath) === commit) return; // its index is in place already
    await syncLaneIndex(lanePath);
    this.synced.set(lanePath, commit);
  }

  async mergeTree(
    head: string,
    laneCommit: string,
  ): Promise<{ tree: string; laneChangeOnly?: boolean } | { conflicts: string[] }> {
    // Without a process where the result is certain (disjoint-merge.ts), else merge-tree's.
    const { objects, trees } = this.sessions;
    const tree = await disjointMerge(objects, trees, head, laneCommit);
    return tree !== null ? { tree, laneChangeOnly: true } : cleanMerge(this.root, head, laneCommit);
  }

  async sameChange(base: string, laneCommit: string, head: string, tree: string): Promise<boolean> {
    const objects = this.sessions.objects;
    const [baseCommit, lane, headCommit] = await Promise.all(
      [base, laneCommit, head].map((sha) => objects.commit(sha)),
    );
    if (!baseCommit || !lane || !headCommit)
      throw new Error(`commit not found: ${base} ${laneCommit} ${head}`);
    const [laneChange, candidate] = await Promise.all([
      treeChanges(objects, baseCommit.tree, lane.tree),
      treeChanges(objects, headCommit.tree, tree),
    ]);
    return sameChange(laneChange, candidate);
  }

  async integrationCommit(
    tree: string,
    parent: string,
    laneCommit: string,
    extraTrailers: string,
  ): Promise<string> {
    const lane = await this.sessions.objects.commit(laneCommit);
    if (!lane) throw new Error(`lane commit ${laneCommit} not found`);
    const message = `${lane.message.replace(/\n+$/, '')}\n${extraTrailers}`;
    const { committer } = await this.sessions.ident();
    return this.sessions.commits.write(tree, [parent], lane.author, personLine(committer), message);
  }

  advanceBranch(branch: string, next: string, expected: string): Promise<boolean> {
    return this.sessions.refs.compareAndSwap(`refs/heads/${branch}`, next, expected);
  }

  async withScratchCheckout<T>(commit: string, dir: string, fn: (path: string) => Promise<T>): Promise<T> {
    mkdirSync(dir, { recursive: true });
    const path = join(dir, `check-${randomBytes(4).toString('hex')}`);
    await git(this.root, ['worktree', 'add', '--detach', '--quiet', path, commit]);
    try {
      return await fn(path);
    } finally {
      await git(this.root, ['worktree', 'remove', '--force', path], { okCodes: [128] });
      rmSync(path, { recursive: true, force: true });
      await git(this.root, ['worktree', 'prune']);
    }
  }

  reworkLane(
    lanePath: string,
    branch: string,
    head: string,
    ids: { batch: string; task: string; base: string },
  ): Promise<ReworkOutcome> {
    return reworkLane(lanePath, branch, head, ids, this.root);
  }

  conflictMarkers(lanePath: string, paths: readonly string[]): Promise<string[]> {
    return Promise.resolve(conflictMarkers(lanePath, paths));
  }
}
