import { existsSync, mkdirSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { Config } from '../core/config.js';
import { crashPoint } from '../process/crash-points.js';
import type { Handoff } from '../core/report.js';
import { isAncestor, resolveCommit } from '../git/commits.js';
import { git } from '../git/git.js';
import { isClean, listWorktrees, realpathOrNull } from '../git/worktrees.js';
import { prepareCheckout } from '../qa/lane-setup.js';

// The steward creates and removes lane worktrees when a tick asks (DESIGN §7). It never
// deletes work that is not integrated: a worktree goes only when it is clean and its
// integration commit is on the batch branch.

export type ProvisionResult =
  { kind: 'offer'; taskId: string; path: string } | { kind: 'failed'; taskId: string; reason: string };

export class Steward {
  constructor(
    private readonly repoRoot: string,
    private readonly batchId: string,
    private readonly config: Config,
    private readonly logDirFor: (taskId: string) => string,
  ) {}

  /** Where a child's lane lives: the configured lanes root with {repo}, {batch}, {child} filled. */
  lanePath(taskId: string): string {
    const template = this.config.lanes_root;
    const filled = template
      .replaceAll('{repo}', basename(this.repoRoot))
      .replaceAll('{batch}', this.batchId)
      .replaceAll('{child}', taskId);
    const path = resolve(this.repoRoot, filled);
    return template.includes('{child}') ? path : join(path, taskId);
  }

  async provision(h: Extract<Handoff, { action: 'provision' }>): Promise<ProvisionResult> {
    const path = this.lanePath(h.task_id);
    const failed = (reason: string): ProvisionResult => ({
      kind: 'failed',
      taskId: h.task_id,
      reason: `lane setup failed: ${reason}`,
    });
    // Only a path that exists can be a lane left from before a crash: no worktree listing
    // (a git call per provision) for the usual new lane.
    const real = existsSync(path) ? realpathOrNull(path) : null;
    const existing =
      real === null
        ? undefined
        : (await listWorktrees(this.repoRoot)).find((w) => realpathOrNull(w.path) === real);
    if (existing) {
      // A lane made before a crash and never admitted: reuse it when it is clean and unused.
      if (existing.branch !== h.lane_branch)
        return failed(`${path} is a worktree on ${existing.branch ?? 'a detached HEAD'}`);
      if (!(await isClean(path))) return failed(`${path} already exists with changes in it`);
      if (existing.head !== h.base_head) {
        const moved = await this.moveToBase(path, h.base_head);
        if (!moved) return failed(`${path} already exists with commits of its own`);
      }
    } else {
      if (existsSync(path)) return failed(`${path} exists and is not a worktree of this repository`);
      mkdirSync(dirname(path), { recursive: true });
      const branchTip = await resolveCommit(this.repoRoot, `refs/heads/${h.lane_branch}`);
      if (branchTip !== null && !(await isAncestor(this.repoRoot, branchTip, h.base_head)))
        return failed(`branch ${h.lane_branch} already exists with commits that are not on the batch branch`);
      const args = branchTip === null ? ['-b', h.lane_branch] : ['-B', h.lane_branch];
      const add = await git(this.repoRoot, ['worktree', 'add', '--quiet', ...args, path, h.base_head], {
        okCodes: [128, 255],
      });
      if (add.exitCode !== 0) return failed(add.stderr.trim());
      crashPoint('after-worktree-add', h.task_id);
    }
    const notReady = await prepareCheckout(this.repoRoot, path, this.config, (name) =>
      join(this.logDirFor(h.task_id), `${name}.log`),
    );
    if (notReady) return failed(notReady);
    return { kind: 'offer', taskId: h.task_id, path };
  }

  /** Moves a clean, unused lane to a new base on its own branch (after batch_lane_base_mismatch). */
  async moveToBase(path: string, base: string): Promise<boolean> {
    if (!(await isClean(path))) return false;
    const head = await resolveCommit(path, 'HEAD');
    if (head === null || !(await isAncestor(path, head, base))) return false;
    await git(path, ['reset', '--hard', '--quiet', base]);
    return true;
  }

  /** Removes an integrated lane: only when clean and its commit is on the batch branch tip. */
  async release(
    h: Extract<Handoff, { action: 'release' }>,
    integrationCommit: string,
    batchBranch: string,
  ): Promise<string | null> {
    if (!existsSync(h.lane_path)) return null;
    if (!(await isClean(h.lane_path))) return `lane ${h.lane_path} has changes: kept`;
    const tip = await resolveCommit(this.repoRoot, `refs/heads/${batchBranch}`);
    if (tip === null || !(await isAncestor(this.repoRoot, integrationCommit, tip)))
      return `the integration of ${h.task_id} is not on ${batchBranch}: lane kept`;
    if (!this.config.keep_lane_branches) {
      // The branch goes first (the lane detached from it): a crash between the two leaves
      // a lane the next release finds again, never a branch that nothing deletes any more.
      await git(h.lane_path, ['checkout', '--quiet', '--detach']);
      await git(this.repoRoot, ['branch', '-D', '--quiet', h.lane_branch], { okCodes: [1] });
    }
    const removed = await git(this.repoRoot, ['worktree', 'remove', h.lane_path], { okCodes: [128] });
    if (removed.exitCode !== 0) return `git worktree remove failed: ${removed.stderr.trim()}`;
    crashPoint('after-worktree-remove', h.task_id);
    return null;
  }
}
