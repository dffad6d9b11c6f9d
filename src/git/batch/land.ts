import { cleanMerge, identityEnv, isAncestor, resolveCommit, updateRef } from '../runner/commits.js';
import { git, gitLine } from '../runner/git.js';
import { listWorktrees } from '../worktree/worktrees.js';
import { crashPoint } from '../../process/crash-points.js';

// The git side of `lanes land` (decisions in core/land.ts): plumbing for the branch, and
// for a worktree that has it checked out, a two-tree read-tree that refuses to overwrite
// anything (tried first with --dry-run), so no change of the user's is ever lost.

export async function branchTip(root: string, branch: string): Promise<string | null> {
  return resolveCommit(root, `refs/heads/${branch}`);
}

export async function checkedOutIn(
  root: string,
  branch: string,
): Promise<{ path: string; clean: boolean } | null> {
  const entry = (await listWorktrees(root)).find((w) => w.branch === branch);
  if (!entry) return null;
  return { path: entry.path, clean: await isTrackedClean(entry.path) };
}

/** No staged or unstaged change to a tracked file (untracked files in the way make read-tree refuse). */
async function isTrackedClean(path: string): Promise<boolean> {
  const out = await git(path, ['status', '--porcelain', '-z', '--untracked-files=no']);
  return out.stdout === '';
}

/** The merge commit of `batchTip` into `intoTip` (first parent: the branch), or the conflicts. */
export async function mergeCommit(
  root: string,
  intoTip: string,
  batchTip: string,
  message: string,
): Promise<{ commit: string } | { conflicts: string[] }> {
  const merged = await cleanMerge(root, intoTip, batchTip);
  if ('conflicts' in merged) return merged;
  const env = await identityEnv(root);
  const commit = await gitLine(root, ['commit-tree', merged.tree, '-p', intoTip, '-p', batchTip, '-F', '-'], {
    env,
    input: message,
  });
  return { commit };
}

export type MoveResult = { kind: 'moved' } | { kind: 'refused'; reason: string };

/**
 * Moves `branch` from `from` to `to` (compare-and-swap). When a worktree has it checked
 * out, that worktree's index and files follow with `read-tree -m -u from to`, tried first
 * with --dry-run: a file in the way refuses before anything moved.
 */
export async function moveBranch(
  root: string,
  branch: string,
  from: string,
  to: string,
  worktree: string | null,
): Promise<MoveResult> {
  if (worktree) {
    const dry = await git(worktree, ['read-tree', '-m', '-u', '-n', from, to], { okCodes: [128] });
    if (dry.exitCode !== 0)
      return { kind: 'refused', reason: `${worktree} cannot take the change: ${dry.stderr.trim()}` };
  }
  if (!(await updateRef(root, `refs/heads/${branch}`, to, from)))
    return { kind: 'refused', reason: `${branch} moved while lanes was landing: nothing was changed` };
  crashPoint('after-land-update-ref', branch);
  if (worktree) {
    const why = await followBranch(worktree, from, to);
    if (why !== null) {
      await updateRef(root, `refs/heads/${branch}`, from, to); // back: the worktree did not follow
      return { kind: 'refused', reason: why };
    }
  }
  return { kind: 'moved' };
}

/**
 * The worktree's index and files from `from` to `to` (its branch moved there), refusing to
 * overwrite a change of the user's: null when done (or done already), else why not.
 */
export async function followBranch(worktree: string, from: string, to: string): Promise<string | null> {
  const applied = await git(worktree, ['read-tree', '-m', '-u', from, to], { okCodes: [128] });
  return applied.exitCode === 0 ? null : `${worktree} cannot take the change: ${applied.stderr.trim()}`;
}

/** The remote's value of a branch, or null when it has none. */
export async function remoteTip(root: string, remote: string, branch: string): Promise<string | null> {
  const out = await gitLine(root, ['ls-remote', '--', remote, `refs/heads/${branch}`]);
  const sha = out.split('\t')[0]?.trim() ?? '';
  return /^[0-9a-f]{40,64}$/.test(sha) ? sha : null;
}

/** True when `commit` exists here and is an ancestor of `tip`. */
export async function containsCommit(root: string, commit: string, tip: string): Promise<boolean> {
  if ((await resolveCommit(root, commit)) === null) return false;
  return isAncestor(root, commit, tip);
}

/** Pushes `branch` with a lease on the remote's old value (absent when null). */
export async function pushWithLease(
  root: string,
  remote: string,
  branch: string,
  expected: string | null,
): Promise<void> {
  const ref = `refs/heads/${branch}`;
  await git(root, [
    'push',
    '--quiet',
    `--force-with-lease=${ref}:${expected ?? ''}`,
    '--',
    remote,
    `${ref}:${ref}`,
  ]);
}
