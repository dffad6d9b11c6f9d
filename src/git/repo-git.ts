import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { CommitSummary, DeliveryIds, GitPort, LaneLook, OfferFacts } from '../core/ports.js';
import {
  changeIdentity,
  commitAuthorAndMessage,
  commitsAuthorAndMessage,
  commitsBetween,
  commitTree,
  identityEnv,
  isAncestor,
  resolveCommit,
  sameChange,
  updateRef,
} from './commits.js';
import type { Ident } from './commits.js';
import { commitDelivery, findDelivery, syncLaneIndex } from './delivery.js';
import { conflictMarkers, reworkLane } from './lane-work.js';
import type { ReworkOutcome } from '../core/rework-onto-head.js';
import { git, splitNul } from './git.js';
import { changedPaths, inspectLane, isClean, listWorktrees, realpathOrNull } from './worktrees.js';
import type { WorktreeEntry } from './worktrees.js';

// The GitPort over a real repository: plumbing only, never the user's work tree or index.

export class RepoGit implements GitPort {
  readonly coordinatorRoot: string;

  constructor(
    /** The coordinator's worktree (where lanes runs). */
    readonly root: string,
    readonly commonDir: string,
  ) {
    this.coordinatorRoot = realpathOrNull(root) ?? root;
  }

  branchTip(branch: string): Promise<string | null> {
    return resolveCommit(this.root, `refs/heads/${branch}`);
  }

  isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    return isAncestor(this.root, ancestor, descendant);
  }

  commitsBetween(from: string, to: string): Promise<CommitSummary[]> {
    return commitsBetween(this.root, from, to);
  }

  /** One `git worktree list` per tick answers "is this lane there, on which branch" for every lane. */
  private worktrees: Promise<WorktreeEntry[]> | null = null;

  refresh(): void {
    this.worktrees = null;
  }

  private listed(): Promise<WorktreeEntry[]> {
    this.worktrees ??= listWorktrees(this.root);
    return this.worktrees;
  }

  async worktreesOnBranch(branch: string): Promise<string[]> {
    return (await this.listed()).filter((w) => w.branch === branch).map((w) => w.path);
  }

  offerFacts(path: string): Promise<OfferFacts> {
    return inspectLane(path, this.commonDir);
  }

  async lookAtLane(path: string, options: { clean?: boolean } = {}): Promise<LaneLook> {
    const real = realpathOrNull(path);
    const entry =
      real === null ? undefined : (await this.listed()).find((w) => realpathOrNull(w.path) === real);
    // A worktree git still lists but whose folder is gone is not present.
    if (!entry || !existsSync(path)) return { present: false, branch: null, clean: false };
    return { present: true, branch: entry.branch, clean: options.clean ? await isClean(path) : false };
  }

  changedPaths(lanePath: string, base: string): Promise<string[]> {
    return changedPaths(lanePath, base);
  }

  findDelivery(lanePath: string, branch: string, ids: DeliveryIds): Promise<string | null> {
    return findDelivery(lanePath, branch, ids);
  }

  commitDelivery(
    lanePath: string,
    branch: string,
    paths: string[],
    goal: string,
    ids: DeliveryIds,
  ): Promise<string> {
    return commitDelivery(lanePath, branch, paths, goal, ids, this.root);
  }

  syncLaneIndex(lanePath: string): Promise<void> {
    return syncLaneIndex(lanePath);
  }

  async mergeTree(head: string, laneCommit: string): Promise<{ tree: string } | { conflicts: string[] }> {
    const out = await git(
      this.root,
      ['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', head, laneCommit],
      {
        okCodes: [1],
      },
    );
    const [tree = '', ...paths] = splitNul(out.stdout.replace(/\n$/, ''));
    if (out.exitCode === 0) return { tree: tree.trim() };
    return { conflicts: [...new Set(paths.map((p) => p.trim()).filter(Boolean))] };
  }

  async sameChange(base: string, laneCommit: string, head: string, tree: string): Promise<boolean> {
    const [lane, candidate] = await Promise.all([
      changeIdentity(this.root, base, laneCommit),
      changeIdentity(this.root, head, tree),
    ]);
    return sameChange(lane, candidate);
  }

  async integrationCommit(
    tree: string,
    parent: string,
    laneCommit: string,
    extraTrailers: string,
  ): Promise<string> {
    const { author, message: laneMessage } = await this.authorAndMessage(laneCommit);
    const message = `${laneMessage.replace(/\n+$/, '')}\n${extraTrailers}`;
    const env = {
      ...(await identityEnv(this.root)),
      GIT_AUTHOR_NAME: author.name,
      GIT_AUTHOR_EMAIL: author.email,
      GIT_AUTHOR_DATE: author.date,
    };
    return commitTree(this.root, tree, parent, message, env);
  }

  /** Lane commits never change: their author and message are read once (a rebuild replays many). */
  private readonly messages = new Map<string, Promise<{ author: Ident; message: string }>>();

  private authorAndMessage(sha: string): Promise<{ author: Ident; message: string }> {
    let found = this.messages.get(sha);
    if (!found) {
      found = commitAuthorAndMessage(this.root, sha);
      this.messages.set(sha, found);
    }
    return found;
  }

  /** Reads the author and message of many commits in one git call (before a rebuild). */
  async loadMessages(shas: readonly string[]): Promise<void> {
    const wanted = shas.filter((sha) => !this.messages.has(sha));
    if (wanted.length === 0) return;
    for (const [sha, info] of await commitsAuthorAndMessage(this.root, wanted))
      this.messages.set(sha, Promise.resolve(info));
  }

  advanceBranch(branch: string, next: string, expected: string): Promise<boolean> {
    return updateRef(this.root, `refs/heads/${branch}`, next, expected);
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
    ids: { batch: string; task: string },
  ): Promise<ReworkOutcome> {
    return reworkLane(lanePath, branch, head, ids, this.root);
  }

  conflictMarkers(lanePath: string, paths: readonly string[]): Promise<string[]> {
    return Promise.resolve(conflictMarkers(lanePath, paths));
  }
}
