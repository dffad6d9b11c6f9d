import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ReworkOutcome } from '../../core/ports/git-port.js';
import { commitInfo, identityEnv, mergeTrees, resolveCommit, updateRef } from '../runner/commits.js';
import { git, gitLine } from '../runner/git.js';
import { scratchDir } from '../../process/scratch.js';

// Work in a lane that is not a delivery yet (docs/DECISIONS.md, "No dead ends"):
// - keepLaneWork: everything the lane holds (committed or not, untracked files too, ignored
//   files not) as a commit on its own branch, so the branch alone keeps the work before the
//   worktree goes to the trash;
// - reworkLane: the lane's own change (its work against its base) applied three-way onto
//   the current batch head, in the lane; what the base held and the head lacks (a sibling
//   taken off the batch) stays out.
// Both build their trees in a private index; refs move by compare-and-swap only.

async function withPrivateIndex<T>(fn: (env: Record<string, string>) => Promise<T>): Promise<T> {
  const scratch = scratchDir('lanes-index');
  try {
    return await fn({ GIT_INDEX_FILE: join(scratch, 'index') });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** The tree of the lane's work tree as it is (over `tip`). */
async function workTree(lanePath: string, tip: string): Promise<string> {
  return withPrivateIndex(async (env) => {
    await git(lanePath, ['read-tree', tip], { env });
    await git(lanePath, ['add', '-A', '--', '.'], { env });
    return gitLine(lanePath, ['write-tree'], { env });
  });
}

async function treeOf(cwd: string, commit: string): Promise<string> {
  return gitLine(cwd, ['rev-parse', `${commit}^{tree}`]);
}

async function commitWith(
  lanePath: string,
  identityFrom: string,
  tree: string,
  parents: string[],
  message: string,
): Promise<string> {
  const env = await identityEnv(identityFrom);
  return gitLine(lanePath, ['commit-tree', tree, ...parents.flatMap((p) => ['-p', p]), '-F', '-'], {
    env,
    input: message,
  });
}

/** The lane's uncommitted work as a commit over its branch tip (the tip itself when there is none). */
async function snapshot(lanePath: string, branch: string, identityFrom: string, subject: string) {
  const tip = await resolveCommit(lanePath, `refs/heads/${branch}`);
  if (!tip) throw new Error(`lane branch ${branch} is gone`);
  return snapshotOver(lanePath, tip, identityFrom, subject);
}

async function snapshotOver(lanePath: string, tip: string, identityFrom: string, subject: string) {
  const tree = await workTree(lanePath, tip);
  if (tree === (await treeOf(lanePath, tip))) return { tip, work: tip };
  const work = await commitWith(lanePath, identityFrom, tree, [tip], `${subject}\n`);
  return { tip, work };
}

/**
 * Commits what the lane holds onto its branch (a no-op when nothing is uncommitted) and
 * returns the branch tip. The work tree and index are left as they are.
 */
export async function keepLaneWork(
  lanePath: string,
  branch: string,
  identityFrom: string,
  /** The lane's base: what the work is kept over when someone deleted the branch. */
  base: string,
): Promise<string> {
  const ref = `refs/heads/${branch}`;
  const subject = 'lanes: work kept from the lane';
  if (!(await resolveCommit(lanePath, ref))) {
    // (made again from nothing: update-ref refuses if someone made it meanwhile)
    const { work } = await snapshotOver(lanePath, base, identityFrom, subject);
    if (!(await updateRef(lanePath, ref, work, '')))
      throw new Error(`lane branch ${branch} was made again while lanes kept its work`);
    await git(lanePath, ['reset', '--quiet']);
    return work;
  }
  const { tip, work } = await snapshot(lanePath, branch, identityFrom, subject);
  if (work === tip) return tip;
  if (!(await updateRef(lanePath, ref, work, tip)))
    throw new Error(`lane branch ${branch} moved while lanes kept its work`);
  await git(lanePath, ['reset', '--quiet']); // the index follows the new tip; files untouched
  return work;
}

const ONTO = 'Lanes-Rework-Onto';
const CONFLICTS = 'Lanes-Conflicts';

export async function reworkLane(
  lanePath: string,
  branch: string,
  head: string,
  ids: { batch: string; task: string; base: string },
  identityFrom: string,
): Promise<ReworkOutcome> {
  const ref = `refs/heads/${branch}`;
  const tip = await resolveCommit(lanePath, ref);
  if (!tip) throw new Error(`lane branch ${branch} is gone`);
  const info = await commitInfo(lanePath, tip);
  if (info.trailers[ONTO] === head && info.trailers['Lanes-Task'] === ids.task && info.parents[0] === head) {
    // Done before a crash: the branch moved; the work tree may not have followed yet.
    const conflicts = (info.trailers[CONFLICTS] ?? '').split(', ').filter(Boolean);
    const now = await workTree(lanePath, tip);
    const before = info.parents[1] ? await treeOf(lanePath, info.parents[1]) : null;
    if (now !== (await treeOf(lanePath, tip)) && now === before)
      await git(lanePath, ['reset', '--hard', '--quiet']);
    return { commit: tip, conflicts };
  }
  const { work } = await snapshot(
    lanePath,
    branch,
    identityFrom,
    `lanes(${ids.task}): work in the lane before the rework onto ${head.slice(0, 12)}`,
  );
  const { tree, conflicts } = await mergeTrees(lanePath, head, work, ids.base);
  const trailers = [
    `Lanes-Batch: ${ids.batch}`,
    `Lanes-Task: ${ids.task}`,
    `${ONTO}: ${head}`,
    ...(conflicts.length ? [`${CONFLICTS}: ${conflicts.join(', ')}`] : []),
  ];
  const message = `lanes(${ids.task}): rework onto the batch head ${head.slice(0, 12)}\n\n${trailers.join('\n')}\n`;
  const commit = await commitWith(lanePath, identityFrom, tree, [head, work], message);
  if (!(await updateRef(lanePath, ref, commit, tip)))
    throw new Error(`lane branch ${branch} moved while lanes reworked it`);
  // Everything the work tree held is in `work` (the merge's second parent): the reset loses nothing.
  await git(lanePath, ['reset', '--hard', '--quiet']);
  return { commit, conflicts };
}

const MARKER = /^(<{7}|>{7})( |$)/m;

export function conflictMarkers(lanePath: string, paths: readonly string[]): string[] {
  return paths.filter((p) => {
    const file = join(lanePath, p);
    if (!existsSync(file)) return false;
    try {
      return MARKER.test(readFileSync(file, 'utf8'));
    } catch {
      return false; // a directory or unreadable: not a text conflict
    }
  });
}
