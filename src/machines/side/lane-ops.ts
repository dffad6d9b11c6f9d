import type { WorktreeInfo } from '../../core/ports/worktree-port.js';
import { LaneWorktrees } from '../../git/ports/lane-worktrees.js';
import { RepoGit } from '../../git/ports/repo-git.js';
import { resolveCommit } from '../../git/runner/commits.js';
import type { OpValues, ParsedOpArgs } from '../protocol.js';
import { withCacheLock } from './cache-lock.js';
import { insideRoot, needCache } from './place.js';
import type { Place } from './place.js';

// The worktree and git ops: the WorktreePort and GitPort of the coordinator, run by the same
// adapters over the machine's repository cache (bare: its lanes are its only worktrees, and
// `git.offerFacts`' sameRepository means "a worktree of the cache"). What the adapters do
// once, and a retry would do again, is looked for first: the link runs an op a second time
// when its connection dropped before the answer (a lane already there at that base, a
// delivery already made, a worktree already moved or removed).

type LaneOp = Extract<keyof OpValues, `wt.${string}` | `git.${string}`>;
type Handler<Op extends LaneOp> = (
  args: ParsedOpArgs<Op>,
  ports: LanePorts,
) => Promise<OpValues[Op]> | OpValues[Op];

interface LanePorts {
  place: Place;
  wt: LaneWorktrees;
  git: RepoGit;
}

const orNull = <T>(value: T | undefined): T | null => (value === undefined ? null : value);

export const LANE_OPS: { [Op in LaneOp]: Handler<Op> } = {
  // (the cache itself, bare, is no worktree: git lists it first)
  'wt.list': async (_, { wt, place }) => (await wt.list()).filter((w) => w.path !== place.cache),
  'wt.at': async ({ path }, { wt }) => orNull(await wt.at(path)),
  'wt.exists': ({ path }, { wt }) => wt.exists(path),
  'wt.isClean': ({ path }, { wt }) => wt.isClean(path),
  'wt.isUnpopulated': ({ path }, { wt }) => wt.isUnpopulated(path),
  'wt.branchTip': ({ branch }, { wt }) => wt.branchTip(branch),
  'wt.onBranch': ({ commit, tip }, { wt }) => wt.onBranch(commit, tip),
  'wt.headOf': ({ path }, { wt }) => wt.headOf(path),
  'wt.add': async ({ path, branch, base, branchExists, checkout }, { place, wt }) => {
    insideRoot(place, path, 'wt.add: the lane path');
    if (await laneThere(wt, await wt.at(path), branch, base)) return null;
    return wt.add(path, branch, base, branchExists, checkout);
  },
  'wt.resetKeep': ({ path, base }, { wt }) => wt.resetKeep(path, base),
  'wt.deleteBranch': async ({ path, branch }, { wt }) => {
    await wt.deleteBranch(path, branch);
    return null;
  },
  'wt.branchAt': ({ path }, { wt }) => wt.branchAt(path),
  'wt.restoreBranch': async ({ path, branch, tip }, { wt }) => {
    // (done already: the lane on its branch again, at that tip)
    if ((await wt.branchAt(path)) === branch && (await wt.headOf(path)) === tip) return true;
    return wt.restoreBranch(path, branch, tip);
  },
  'wt.remove': async ({ path }, { place, wt }) => {
    insideRoot(place, path, 'wt.remove: the lane path');
    if (!(await wt.exists(path)) && (await wt.list()).every((w) => w.path !== path)) return null;
    return wt.remove(path);
  },
  'wt.lookAtFiles': ({ path, base }, { wt }) => wt.lookAtFiles(path, base),
  'wt.changedAtExit': ({ path, base }, { wt }) => wt.changedAtExit(path, base),
  'wt.keepWork': ({ path, branch, base }, { wt }) => wt.keepWork(path, branch, base),
  'wt.move': async ({ path, to }, { place, wt }) => {
    insideRoot(place, path, 'wt.move: the lane path');
    insideRoot(place, to, 'wt.move: the new path');
    if (!(await wt.exists(path)) && (await wt.at(to)) !== undefined) return null; // (moved already)
    await wt.move(path, to);
    return null;
  },
  'wt.realpath': ({ path }, { wt }) => wt.realpath(path),
  'git.offerFacts': ({ path }, { git }) => git.offerFacts(path),
  'git.lookAtLane': ({ path, clean }, { git }) => git.lookAtLane(path, clean === undefined ? {} : { clean }),
  'git.changedPaths': ({ lanePath, base }, { git }) => git.changedPaths(lanePath, base),
  'git.findDelivery': ({ lanePath, branch, ids }, { git }) => git.findDelivery(lanePath, branch, ids),
  'git.commitDelivery': async ({ lanePath, branch, paths, goal, ids }, { git }) => {
    const made = await git.findDelivery(lanePath, branch, ids);
    return made ?? git.commitDelivery(lanePath, branch, paths, goal, ids);
  },
  'git.syncLaneIndex': async ({ lanePath, commit }, { git }) => {
    await git.syncLaneIndex(lanePath, commit);
    return null;
  },
  'git.reworkLane': ({ lanePath, branch, head, ids }, { git }) => git.reworkLane(lanePath, branch, head, ids),
  'git.conflictMarkers': ({ lanePath, paths }, { git }) => git.conflictMarkers(lanePath, paths),
};

export function isLaneOp(op: string): op is LaneOp {
  return op in LANE_OPS;
}

/** The ops that only read files and objects: they run beside anything (the rest take turns). */
const READS: ReadonlySet<string> = new Set([
  'wt.exists',
  'wt.isClean',
  'wt.isUnpopulated',
  'wt.branchTip',
  'wt.onBranch',
  'wt.headOf',
  'wt.branchAt',
  'wt.lookAtFiles',
  'wt.changedAtExit',
  'wt.realpath',
  'git.offerFacts',
  'git.changedPaths',
  'git.findDelivery',
  'git.conflictMarkers',
]);

export function runLaneOp<Op extends LaneOp>(
  op: Op,
  args: ParsedOpArgs<Op>,
  place: Place,
): Promise<OpValues[Op]> {
  const cache = needCache(place, op);
  const ports: LanePorts = { place, wt: new LaneWorktrees(cache), git: new RepoGit(cache, cache) };
  const run = () => Promise.resolve((LANE_OPS[op] as Handler<Op>)(args, ports));
  // (git's worktree bookkeeping, `git worktree …` and `git branch`, one op at a time: cache-lock.ts)
  return READS.has(op) ? run() : withCacheLock(cache, run);
}

/** A worktree at the path already, on `branch`, its HEAD at `base`: what a first `wt.add` made. */
async function laneThere(
  wt: LaneWorktrees,
  found: WorktreeInfo | undefined,
  branch: string,
  base: string,
): Promise<boolean> {
  if (found === undefined || found.branch !== branch) return false;
  const [head, wanted] = await Promise.all([wt.headOf(found.path), resolveCommit(found.path, base)]);
  return head !== null && head === wanted;
}
