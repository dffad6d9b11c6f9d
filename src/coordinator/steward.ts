import { existsSync, mkdirSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { Config } from '../core/config.js';
import { crashPoint } from '../process/crash-points.js';
import type { Handoff } from '../core/report.js';
import { isAncestor, resolveCommit } from '../git/commits.js';
import { git } from '../git/git.js';
import { RepoSessions } from '../git/repo-sessions.js';
import { linkedGitDir } from '../git/worktree-files.js';
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

  private get sessions(): RepoSessions {
    return RepoSessions.of(this.repoRoot);
  }

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
      const branchTip = await this.sessions.objects.resolve(`refs/heads/${h.lane_branch}^{commit}`);
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

  /**
   * Moves an unused lane to a new base on its own branch (after batch_lane_base_mismatch).
   * `reset --keep` refuses when a file it would change has changes of the lane's own, so no
   * status is read first; the lane is offered again and admission looks at it anyway.
   */
  async moveToBase(path: string, base: string): Promise<boolean> {
    const gitDir = linkedGitDir(path);
    const head =
      gitDir === null
        ? await resolveCommit(path, 'HEAD')
        : await this.sessions.objects.resolve(`worktrees/${basename(gitDir)}/HEAD`);
    if (head === null || !(await this.onBranch(head, base))) return false;
    const moved = await git(path, ['reset', '--keep', '--quiet', base], { okCodes: [1, 128] });
    return moved.exitCode === 0;
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
    if (!existsSync(h.lane_path)) return null;
    const tip = await this.sessions.objects.resolve(`refs/heads/${batchBranch}^{commit}`);
    if (tip === null || !(await this.onBranch(integrationCommit, tip)))
      return `the integration of ${h.task_id} is not on ${batchBranch}: lane kept`;
    if (!this.config.keep_lane_branches) {
      // The branch goes first (the lane detached from it): a crash between the two leaves
      // a lane the next release finds again, never a branch that nothing deletes any more.
      if (!(await this.detachAndDeleteBranch(h.lane_path, h.lane_branch))) {
        await git(h.lane_path, ['checkout', '--quiet', '--detach']);
        await git(this.repoRoot, ['branch', '-D', '--quiet', h.lane_branch], { okCodes: [1] });
      }
    }
    const removed = await git(this.repoRoot, ['worktree', 'remove', h.lane_path], { okCodes: [128] });
    if (removed.exitCode !== 0) return `git worktree remove failed: ${removed.stderr.trim()}`;
    crashPoint('after-worktree-remove', h.task_id);
    return null;
  }

  private async onBranch(commit: string, tip: string): Promise<boolean> {
    if (commit === tip) return true;
    return (await this.sessions.objects.reaches(commit, tip)) ?? isAncestor(this.repoRoot, commit, tip);
  }

  /**
   * Detaches the lane at its branch tip and deletes the branch in one ref transaction (the
   * lane's HEAD is `worktrees/<id>/HEAD` to the repository). False when that cannot be
   * done that way (not a linked worktree, the branch not where it was read): the caller
   * uses checkout and branch -D then.
   */
  private async detachAndDeleteBranch(lanePath: string, branch: string): Promise<boolean> {
    const gitDir = linkedGitDir(lanePath);
    if (gitDir === null) return false;
    const id = basename(gitDir);
    const ref = `refs/heads/${branch}`;
    const [tip, head] = await Promise.all([
      this.sessions.objects.resolve(ref),
      this.sessions.objects.resolve(`worktrees/${id}/HEAD`),
    ]);
    if (tip === null || head !== tip) return false;
    return this.sessions.refs.transaction([
      'option no-deref',
      `update worktrees/${id}/HEAD ${tip}`,
      `delete ${ref} ${tip}`,
    ]);
  }
}
