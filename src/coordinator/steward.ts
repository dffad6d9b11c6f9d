import { basename, join, resolve } from 'node:path';
import type { Config } from '../core/config.js';
import type { WorktreePort } from '../core/ports.js';
import { crashPoint } from '../process/crash-points.js';
import type { Handoff } from '../core/report.js';
import { prepareCheckout } from '../qa/lane-setup.js';

// The steward creates and removes lane worktrees when a tick asks (DESIGN §7), through the
// WorktreePort. It never deletes work that is not integrated: a worktree goes only when it
// is clean and its integration commit is on the batch branch.

export type ProvisionResult =
  { kind: 'offer'; taskId: string; path: string } | { kind: 'failed'; taskId: string; reason: string };

export class Steward {
  constructor(
    private readonly repoRoot: string,
    private readonly batchId: string,
    private readonly config: Config,
    private readonly logDirFor: (taskId: string) => string,
    private readonly worktrees: WorktreePort,
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
    const wt = this.worktrees;
    const path = this.lanePath(h.task_id);
    const failed = (reason: string): ProvisionResult => ({
      kind: 'failed',
      taskId: h.task_id,
      reason: `lane setup failed: ${reason}`,
    });
    // Only a path that exists can be a lane left from before a crash: no worktree listing
    // (a git call per provision) for the usual new lane.
    const real = wt.exists(path) ? wt.realpath(path) : null;
    const existing = real === null ? undefined : (await wt.list()).find((w) => wt.realpath(w.path) === real);
    if (existing) {
      // A lane made before a crash and never admitted: reuse it when it is clean and unused.
      if (existing.branch !== h.lane_branch)
        return failed(`${path} is a worktree on ${existing.branch ?? 'a detached HEAD'}`);
      if (!(await wt.isClean(path))) return failed(`${path} already exists with changes in it`);
      if (existing.head !== h.base_head) {
        const moved = await this.moveToBase(path, h.base_head);
        if (!moved) return failed(`${path} already exists with commits of its own`);
      }
    } else {
      if (wt.exists(path)) return failed(`${path} exists and is not a worktree of this repository`);
      const branchTip = await wt.branchTip(h.lane_branch);
      if (branchTip !== null && !(await wt.onBranch(branchTip, h.base_head)))
        return failed(`branch ${h.lane_branch} already exists with commits that are not on the batch branch`);
      const why = await wt.add(path, h.lane_branch, h.base_head, branchTip !== null);
      if (why !== null) return failed(why);
      crashPoint('after-worktree-add', h.task_id);
    }
    const notReady = await prepareCheckout(this.repoRoot, path, this.config, (name) =>
      join(this.logDirFor(h.task_id), `${name}.log`),
    );
    if (notReady) return failed(notReady);
    return { kind: 'offer', taskId: h.task_id, path };
  }

  /**
   * Moves an unused lane to a new base on its own branch (after batch_lane_base_mismatch).
   * `reset --keep` refuses when a file it would change has changes of the lane's own, so no
   * status is read first; the lane is offered again and admission looks at it anyway.
   */
  async moveToBase(path: string, base: string): Promise<boolean> {
    const head = await this.worktrees.headOf(path);
    if (head === null || !(await this.worktrees.onBranch(head, base))) return false;
    return this.worktrees.resetKeep(path, base);
  }

  /**
   * Removes an integrated lane: only when clean (the tick's report looked, and `git worktree
   * remove` without --force refuses a lane with changes) and its commit is on the batch branch tip.
   */
  async release(
    h: Extract<Handoff, { action: 'release' }>,
    integrationCommit: string,
    batchBranch: string,
  ): Promise<string | null> {
    const wt = this.worktrees;
    if (!wt.exists(h.lane_path)) return null;
    const tip = await wt.branchTip(batchBranch);
    if (tip === null || !(await wt.onBranch(integrationCommit, tip)))
      return `the integration of ${h.task_id} is not on ${batchBranch}: lane kept`;
    // The branch goes first (the lane detached from it): a crash between the two leaves
    // a lane the next release finds again, never a branch that nothing deletes any more.
    if (!this.config.keep_lane_branches) await wt.deleteBranch(h.lane_path, h.lane_branch);
    const why = await wt.remove(h.lane_path);
    if (why !== null) return why;
    crashPoint('after-worktree-remove', h.task_id);
    return null;
  }
}
