import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { WorktreeInfo, WorktreePort } from '../../core/ports/worktree-port.js';
import { resolveCommit } from '../runner/commits.js';
import { provenClean } from '../worktree/clean-proof.js';
import { dropExitTrees, readExitTree } from '../delivery/exit-tree.js';
import { git } from '../runner/git.js';
import { readLaneStatus } from '../worktree/lane-status.js';
import { keepLaneWork } from '../delivery/lane-work.js';
import { RepoSessions } from '../runner/repo-sessions.js';
import {
  isUnpopulated,
  linkedBranch,
  linkedGitDir,
  linkedHeadRef,
  readHead,
} from '../worktree/worktree-files.js';
import { checkoutLane, undoCutCheckout } from '../worktree/lane-checkout.js';
import { warmLaneFilesThread } from '../worktree/lane-files-thread.js';
import { addUnpopulated, dropStaleLane, plainCommonDir, removeLinked } from '../worktree/worktree-admin.js';
import {
  changedPaths,
  changedPathsAtExit,
  keepChangedPaths,
  isClean,
  listWorktrees,
  realpathOrNull,
  findWorktree,
  worktreeAt,
} from '../worktree/worktrees.js';

// The WorktreePort over one repository: lane worktrees read through the repository's
// long-lived git processes where they can (RepoSessions), changed by `git worktree`.

export class LaneWorktrees implements WorktreePort {
  constructor(private readonly repoRoot: string) {}

  private commonDir: string | null | undefined;

  /** Where lanes writes worktree entries itself (worktree-admin.ts); null: git's. Read once. */
  private get plainCommonDir(): string | null {
    if (this.commonDir === undefined) this.commonDir = plainCommonDir(this.repoRoot);
    return this.commonDir;
  }

  /** Starts what the first lane's checkout and removal use (lane-files-thread.ts) before it is made. */
  warm(): void {
    warmLaneFilesThread();
  }

  private get sessions(): RepoSessions {
    return RepoSessions.of(this.repoRoot);
  }

  list(): Promise<WorktreeInfo[]> {
    return listWorktrees(this.repoRoot);
  }

  async realpath(path: string): Promise<string | null> {
    return realpathOrNull(path);
  }

  async at(path: string, listed?: readonly WorktreeInfo[]): Promise<WorktreeInfo | undefined> {
    return listed ? findWorktree(listed, path) : worktreeAt(this.repoRoot, path);
  }

  async exists(path: string): Promise<boolean> {
    return existsSync(path);
  }

  async isClean(path: string): Promise<boolean> {
    // (a checkout by lanes cut short is taken back first: lane-checkout.ts undoCutCheckout)
    return (await this.undoCut(path)) || isClean(path);
  }

  async isUnpopulated(path: string): Promise<boolean> {
    return (await this.undoCut(path)) || isUnpopulated(path);
  }

  /** True when the lane was a checkout by lanes cut short, and holds nothing checked out now. */
  private undoCut(path: string): Promise<boolean> {
    return undoCutCheckout(this.sessions, path).catch(() => false);
  }

  branchTip(branch: string): Promise<string | null> {
    return this.sessions.branchTip(branch);
  }

  onBranch(commit: string, tip: string): Promise<boolean> {
    return this.sessions.isAncestor(commit, tip);
  }

  async headOf(path: string): Promise<string | null> {
    const gitDir = linkedGitDir(path);
    return gitDir === null ? resolveCommit(path, 'HEAD') : this.linkedHead(gitDir);
  }

  /**
   * The commit a linked worktree's HEAD (gitDir: its folder) is at, from its HEAD file where
   * it can: on a branch, the branch's tip (from its file where it can: loose-refs.ts);
   * detached, the commit the file names; anything else, git's answer.
   */
  linkedHead(gitDir: string): Promise<string | null> {
    const file = readHead(gitDir);
    if (file?.branch) return this.sessions.branchTip(file.branch);
    return file?.head ? Promise.resolve(file.head) : this.sessions.objects.resolve(linkedHeadRef(gitDir));
  }

  async add(
    path: string,
    branch: string,
    base: string,
    branchExists: boolean,
    checkout = true,
  ): Promise<string | null> {
    mkdirSync(dirname(path), { recursive: true });
    if (this.plainCommonDir !== null) dropStaleLane(this.plainCommonDir, path);
    // A new branch is made in the repository's ref transaction process: `worktree add -b`
    // would start a `git branch` of its own for it (docs/DECISIONS.md "Integration overhead",
    // the branch first). The create fails when the branch exists (made meanwhile): `-b` says so.
    const made =
      !branchExists && (await this.sessions.refs.transaction([`create refs/heads/${branch} ${base}`]));
    // A branch of its own, just made: the entry is written here, not by `git worktree add`
    // (and its `symbolic-ref`); a checkout is the `reset --hard` git's add would start.
    const common = made ? this.plainCommonDir : null;
    if (common !== null && addUnpopulated(common, path, branch)) {
      if (!checkout || (await checkoutLane(this.sessions, common, path, base))) return null;
      const reset = await git(path, ['reset', '--hard', '--no-recurse-submodules', '--quiet'], {
        okCodes: [1, 128],
      });
      if (reset.exitCode === 0) return null;
      await removeLinked(common, path); // (as git's add leaves nothing of a failed checkout)
      return reset.stderr.trim();
    }
    const args = made ? [path, branch] : [branchExists ? '-B' : '-b', branch, path, base];
    const noCheckout = checkout ? [] : ['--no-checkout'];
    const add = await git(this.repoRoot, ['worktree', 'add', '--quiet', ...noCheckout, ...args], {
      okCodes: [128, 255],
    });
    return add.exitCode === 0 ? null : add.stderr.trim();
  }

  async resetKeep(path: string, base: string): Promise<boolean> {
    // `reset --keep` refuses when a file it would change has changes of the lane's own. A
    // lane with nothing in it yet has no index: --keep would leave it empty, --hard checks it
    // out (and there is nothing of anyone's in it to lose).
    const unpopulated = isUnpopulated(path);
    const common = unpopulated ? this.plainCommonDir : null;
    const done = common !== null ? await checkoutLane(this.sessions, common, path, base) : null;
    if (done !== null) return done;
    const mode = unpopulated ? '--hard' : '--keep';
    const moved = await git(path, ['reset', mode, '--quiet', base], { okCodes: [1, 128] });
    return moved.exitCode === 0;
  }

  async deleteBranch(path: string, branch: string): Promise<void> {
    if (await this.detachAndDeleteBranch(path, branch)) return;
    if (existsSync(path)) await git(path, ['checkout', '--quiet', '--detach']);
    await git(this.repoRoot, ['branch', '-D', '--quiet', branch], { okCodes: [1] });
  }

  async branchAt(path: string): Promise<string | null> {
    return linkedBranch(path);
  }

  async restoreBranch(path: string, branch: string, tip: string): Promise<boolean> {
    // (a worktree `git worktree remove` left half removed has no git directory to go back to:
    // git would look for one further up, and could move another repository's HEAD)
    const gitDir = linkedGitDir(path);
    if (gitDir === null || !existsSync(join(gitDir, 'HEAD'))) return false;
    if (linkedBranch(path) !== null || (await this.headOf(path)) !== tip) return false;
    const ref = `refs/heads/${branch}`;
    const now = await this.sessions.objects.resolve(ref);
    if (now !== null && now !== tip) return false;
    if (now === null && !(await this.sessions.refs.transaction([`create ${ref} ${tip}`]))) return false;
    await git(path, ['--git-dir', gitDir, 'symbolic-ref', 'HEAD', ref]);
    return true;
  }

  async remove(path: string): Promise<string | null> {
    // --force only for a lane with nothing to lose: not checked out yet (git would read every
    // file as deleted), or proven clean from its files (no status of git's: clean-proof.ts).
    const nothingToLose =
      isUnpopulated(path) ||
      (await provenClean(this.sessions.objects, path, this.sessions.trees, (g) => this.linkedHead(g)));
    dropExitTrees(path); // (what was kept of its last exit goes with it)
    // (nothing to lose: removed as `--force` would, without its process: worktree-admin.ts)
    const common = nothingToLose ? this.plainCommonDir : null;
    const gone = common !== null ? await removeLinked(common, path) : null;
    if (gone !== null) return gone === '' ? null : gone;
    const force = nothingToLose ? ['--force'] : [];
    const removed = await git(this.repoRoot, ['worktree', 'remove', ...force, path], { okCodes: [128] });
    return removed.exitCode === 0 ? null : `git worktree remove failed: ${removed.stderr.trim()}`;
  }

  async lookAtFiles(path: string, base: string): Promise<{ fingerprint: string; changed: string[] }> {
    // One status gives both the file fingerprint and, while HEAD is the base, the changed paths.
    const status = await readLaneStatus(path);
    const changed = await changedPaths(path, base, status ?? undefined);
    return { fingerprint: status?.entries.join('\0') ?? '', changed };
  }

  async changedAtExit(path: string, base: string): Promise<string[]> {
    // (the whole lane's tree, kept for the delivery: exit-tree.ts; else a status)
    const fromTree = await readExitTree(this.sessions, path, base);
    return fromTree !== null ? keepChangedPaths(path, base, fromTree) : changedPathsAtExit(path, base);
  }

  keepWork(path: string, branch: string, base: string): Promise<string> {
    return keepLaneWork(path, branch, this.repoRoot, base);
  }

  async move(path: string, to: string): Promise<void> {
    mkdirSync(dirname(to), { recursive: true });
    await git(this.repoRoot, ['worktree', 'move', path, to]);
  }

  /**
   * Detaches the lane at its branch tip and deletes the branch in one ref transaction (the
   * lane's HEAD is `worktrees/<id>/HEAD` to the repository). False when that cannot be
   * done that way (not a linked worktree, the branch not where it was read): checkout and
   * branch -D then.
   */
  private async detachAndDeleteBranch(lanePath: string, branch: string): Promise<boolean> {
    const gitDir = linkedGitDir(lanePath);
    if (gitDir === null) return false;
    const headRef = linkedHeadRef(gitDir);
    const ref = `refs/heads/${branch}`;
    // (both from their files where they can; the transaction below checks them against git)
    const [tip, head] = await Promise.all([this.sessions.branchTip(branch), this.linkedHead(gitDir)]);
    if (tip === null || head !== tip) return false;
    return this.sessions.refs.transaction([
      'option no-deref',
      `update ${headRef} ${tip}`,
      `delete ${ref} ${tip}`,
    ]);
  }
}
