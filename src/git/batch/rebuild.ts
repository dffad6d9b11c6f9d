import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { cleanMerge, commitTree, identityEnv, keepRef, resolveCommit } from '../runner/commits.js';
import { git } from '../runner/git.js';
import { isClean, worktreeAt } from '../worktree/worktrees.js';

// Rebuilding the batch branch without an evicted child (docs/DECISIONS.md "Final
// verification"), with the plumbing of integration: merge-tree, commit-tree and the
// compare-and-swap update-ref. Git 2.39 has no `merge-tree --merge-base`, so a replay
// (a cherry-pick of laneBase→laneCommit onto head) merges laneCommit with a throwaway
// commit that has head's tree and laneBase as its only parent: their merge base is then
// exactly laneBase. The throwaway commit is never referenced.

/** head's tree plus the change laneBase→laneCommit, or the conflicting paths. */
export async function replayTree(
  root: string,
  head: string,
  laneBase: string,
  laneCommit: string,
): Promise<{ tree: string } | { conflicts: string[] }> {
  const stand = await commitTree(
    root,
    `${head}^{tree}`,
    laneBase,
    'lanes: replay base\n',
    await identityEnv(root),
  );
  return cleanMerge(root, stand, laneCommit);
}

/**
 * An evicted lane back in place to fix: the worktree on its branch at the lane base, the
 * lane commit's files in it, uncommitted (so the next QA and delivery see the change
 * again). Re-created from the lane commit when the worktree was released. Repeatable.
 */
export async function restoreLane(
  root: string,
  lane: { path: string; branch: string; base_head: string; lane_commit: string },
): Promise<void> {
  let entry = await worktreeAt(root, lane.path);
  if (!entry) {
    if (existsSync(lane.path))
      throw new Error(`${lane.path} exists and is not a worktree of this repository`);
    mkdirSync(dirname(lane.path), { recursive: true });
    await git(root, ['worktree', 'prune']);
    await git(root, ['worktree', 'add', '--quiet', '-B', lane.branch, lane.path, lane.lane_commit]);
    entry = await worktreeAt(root, lane.path);
  }
  if (entry?.branch !== lane.branch)
    throw new Error(`${lane.path} is on ${entry?.branch ?? 'a detached HEAD'}, not ${lane.branch}`);
  const head = await resolveCommit(lane.path, 'HEAD');
  // Mixed reset: the branch goes back to the base, the work tree keeps the lane's change.
  if (head === lane.lane_commit) await git(lane.path, ['reset', '--quiet', lane.base_head]);
}

/** A skipped dependent's lane goes: its lane commit kept under `keep`, a clean worktree and the branch removed. */
export async function retireLane(
  root: string,
  lane: { path: string; branch: string; lane_commit: string | null },
  keep: string,
): Promise<void> {
  if (lane.lane_commit) await keepRef(root, keep, lane.lane_commit);
  const entry = await worktreeAt(root, lane.path);
  if (entry && (await isClean(lane.path))) {
    await git(root, ['worktree', 'remove', lane.path], { okCodes: [128] });
  }
  if (!(await worktreeAt(root, lane.path)))
    await git(root, ['branch', '-D', '--quiet', lane.branch], { okCodes: [1] });
}
