import { existsSync, linkSync, lstatSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { personLine } from '../runner/commit-writer.js';
import { git } from '../runner/git.js';
import { addAndWriteTree, copyIndex } from '../worktree/private-index.js';
import type { RepoSessions } from '../runner/repo-sessions.js';
import { indexHolds } from '../worktree/lane-status.js';
import { statStamp } from '../worktree/index-entries.js';
import { linkedGitDir } from '../worktree/worktree-files.js';
import { scratchDir } from '../../process/scratch.js';
import { ExitCode, LanesError } from '../../core/basics/errors.js';

// The delivery commit on a lane branch (DESIGN §6): one commit whose only parent is the lane
// base, holding the lane's in-scope changes (commits the executor made are squashed into
// it), with the lanes trailers. Built in a private index so the lane's own index is only
// touched at the end, to match the new HEAD.

export interface DeliveryTrailers {
  batch: string;
  task: string;
  run: string;
  base: string;
}

export function trailerLines(t: DeliveryTrailers): string {
  return `Lanes-Batch: ${t.batch}\nLanes-Task: ${t.task}\nLanes-Run: ${t.run}\nLanes-Base: ${t.base}\n`;
}

export function deliveryMessage(goal: string, t: DeliveryTrailers): string {
  const subject = goal.split('\n')[0]?.trim().slice(0, 120) || t.task;
  return `lanes(${t.task}): ${subject}\n\n${trailerLines(t)}`;
}

function matches(trailers: Record<string, string>, t: DeliveryTrailers): boolean {
  return (
    trailers['Lanes-Batch'] === t.batch &&
    trailers['Lanes-Task'] === t.task &&
    trailers['Lanes-Run'] === t.run &&
    trailers['Lanes-Base'] === t.base
  );
}

/** The delivery commit already at the lane branch tip (a crash after committing), or null. */
export async function findDelivery(
  sessions: RepoSessions,
  branch: string,
  t: DeliveryTrailers,
): Promise<string | null> {
  const tip = await sessions.branchTip(branch);
  if (!tip || tip === t.base) return null;
  const info = await sessions.objects.commit(tip);
  if (!info || info.parents.length !== 1 || info.parents[0] !== t.base || !matches(info.trailers, t))
    return null;
  return tip;
}

/** Makes the lane's index match its HEAD (files untouched), so a delivered lane reads clean. */
export async function syncLaneIndex(lanePath: string): Promise<void> {
  await git(lanePath, ['reset', '--quiet']);
}

/**
 * A delivery's tree, built in a private index (buildDeliveryTree here, or readExitTree in
 * exit-tree.ts at the executor's exit): used once, then dropped.
 */
export interface DeliveryTree {
  base: string;
  /** The paths it holds, NUL-joined. */
  paths: string;
  /**
   * Their files' stat data as git read them (statStamp; '-': gone), NUL-joined: taken just
   * before git read them (buildDeliveryTree), or the stat data git recorded in the private
   * index (readExitTree). stillCurrent compares them with the files'.
   */
  stamps: string;
  /**
   * The stamps prove the tree's files: buildDeliveryTree's, when every file was last
   * changed before git wrote the private index (file times move in clock ticks, so a file
   * rewritten in the tick it was stamped in can keep its stat data: git's own rule for a
   * "racily clean" entry); readExitTree's, when git recorded each one (no submodule).
   */
  trusted: boolean;
  tree: string;
  index: string;
  gitDir: string | null;
  scratch: string | null;
}

/** Each file's stat data (or that it is gone), and the latest time one of them changed. */
function fileStamps(lanePath: string, paths: readonly string[]): { text: string; latest: bigint } {
  let latest = 0n;
  const text = paths
    .map((p) => {
      const st = lstatSync(join(lanePath, p), { bigint: true, throwIfNoEntry: false });
      if (!st) return '-';
      for (const t of [st.mtimeNs, st.ctimeNs]) if (t > latest) latest = t;
      return statStamp(st); // (in an index entry's fields: an exit tree's stamps are those)
    })
    .join('\0');
  return { text, latest };
}

/**
 * The tree of the lane base with `paths` as they are in the lane's work tree now, in a
 * private index (the lane's own is only replaced by it once the commit is made). It can be
 * built while QA runs (RepoGit.stageDelivery): the commit takes it only if none of its files
 * changed since (their stat data), else builds it again.
 */
let deliveryBuilds = 0;

export async function buildDeliveryTree(
  lanePath: string,
  base: string,
  paths: readonly string[],
): Promise<DeliveryTree> {
  // The private index lives beside the lane's own (in its git directory), so it can become
  // the lane's index by a link and a rename, with no copy of it made (docs/DECISIONS.md
  // "The tick never waits for a worktree").
  const gitDir = linkedGitDir(lanePath);
  const scratch = gitDir === null ? scratchDir('lanes-index') : null;
  // Each build its own index file: a build while QA ran and the commit's own can overlap in
  // one lane, and git locks an index file (`<index>.lock`) while it writes it.
  const own = `lanes-delivery-index-${process.pid}-${++deliveryBuilds}`;
  const index = gitDir === null ? join(scratch!, 'index') : join(gitDir, own);
  const built = {
    base,
    paths: paths.join('\0'),
    stamps: '',
    trusted: false,
    tree: '',
    index,
    gitDir,
    scratch,
  };
  const env = { GIT_INDEX_FILE: index };
  try {
    // Starting from a copy of the lane's index, `read-tree -m` keeps the file stat data of
    // every entry that matches the base, so the lane's index stays as cheap to check as
    // `git reset` would leave it. When the lane's last status found its index holding the
    // base and the file is unchanged since, the copy is the base already.
    const laneIndex = gitDir === null ? null : join(gitDir, 'index');
    const holdsBase = laneIndex !== null && indexHolds(lanePath, base);
    if (laneIndex !== null && existsSync(laneIndex)) copyIndex(laneIndex, index);
    const kept =
      existsSync(index) &&
      ((holdsBase && indexHolds(lanePath, base)) ||
        (await git(lanePath, ['read-tree', '-m', base], { env, okCodes: [128] })).exitCode === 0);
    if (!kept) {
      rmSync(index, { force: true });
      await git(lanePath, ['read-tree', base], { env });
    }
    const stamped = fileStamps(lanePath, paths); // (before git reads them)
    built.stamps = stamped.text;
    built.tree = await addAndWriteTree(lanePath, index, paths);
    built.trusted = stamped.latest < lstatSync(index, { bigint: true }).mtimeNs;
    const gitlinks = await unpopulatedGitlinks(lanePath, paths);
    if (gitlinks.length > 0) {
      for (const [path, sha] of gitlinks)
        await git(lanePath, ['update-index', '--cacheinfo', `160000,${sha},${path}`], { env });
      built.tree = await addAndWriteTree(lanePath, index, []);
      built.trusted = false; // (a gitlink's stat data says nothing of its commit)
    }
    return built;
  } catch (error) {
    dropDeliveryTree(built);
    throw error;
  }
}

/**
 * The submodules among `paths` that are not checked out in the lane, with the commit the
 * lane's index records for them. `git add` leaves such a gitlink as the base has it, so a
 * bump the executor made (update-index, a commit in the lane) would be lost from the
 * delivery; it is taken from the lane's index instead.
 */
async function unpopulatedGitlinks(lanePath: string, paths: readonly string[]): Promise<[string, string][]> {
  if (!existsSync(join(lanePath, '.gitmodules'))) return [];
  const listed = await git(
    lanePath,
    ['config', '-z', '-f', '.gitmodules', '--get-regexp', '^submodule\\..*\\.path$'],
    {
      okCodes: [1],
    },
  );
  const wanted = new Set(paths);
  const subs = listed.stdout
    .split('\0')
    .map((entry) => entry.slice(entry.indexOf('\n') + 1))
    .filter((p) => wanted.has(p) && !existsSync(join(lanePath, p, '.git')));
  if (subs.length === 0) return [];
  const staged = await git(lanePath, ['--literal-pathspecs', 'ls-files', '-s', '-z', '--', ...subs]);
  return staged.stdout
    .split('\0')
    .filter((line) => line.startsWith('160000 '))
    .map((line): [string, string] => [line.slice(line.indexOf('\t') + 1), line.split(' ')[1]!]);
}

export function dropDeliveryTree(built: Pick<DeliveryTree, 'index' | 'scratch'>): void {
  if (built.scratch) rmSync(built.scratch, { recursive: true, force: true });
  else rmSync(built.index, { force: true });
}

/** The tree built early, if it still holds exactly these paths as the lane has them now. */
function stillCurrent(
  built: DeliveryTree | null,
  lanePath: string,
  base: string,
  paths: readonly string[],
): boolean {
  return (
    built !== null &&
    built.base === base &&
    built.paths === paths.join('\0') &&
    built.trusted &&
    built.stamps === fileStamps(lanePath, paths).text
  );
}

/**
 * Commits `paths` (as they are in the lane's work tree) on top of the base and moves the
 * branch (compare-and-swap). The tree is `early`'s when it is still current, else built
 * now; the lane's own index is then replaced by the private one (it is the new HEAD's
 * tree), which is what `git reset` would make. Returns the commit and whether the lane's
 * index was brought to it.
 */
export async function commitDelivery(
  sessions: RepoSessions,
  lanePath: string,
  branch: string,
  paths: readonly string[],
  goal: string,
  t: DeliveryTrailers,
  early: Promise<DeliveryTree> | null = null,
): Promise<{ commit: string; indexSynced: boolean }> {
  const ready = early ? await early.catch(() => null) : null;
  let built: DeliveryTree;
  if (ready !== null && stillCurrent(ready, lanePath, t.base, paths)) built = ready;
  else {
    if (ready !== null) dropDeliveryTree(ready);
    built = await buildDeliveryTree(lanePath, t.base, paths);
  }
  try {
    const { author, committer } = await sessions.ident();
    const commit = await sessions.commits.write(
      built.tree,
      [t.base],
      personLine(author),
      personLine(committer),
      deliveryMessage(goal, t),
    );
    const ref = `refs/heads/${branch}`;
    const tip = await sessions.branchTip(branch);
    if (!tip || !(await sessions.refs.compareAndSwap(ref, commit, tip)))
      throw new LanesError(
        'lane_branch_moved',
        `lane_branch_moved: ${branch} ${tip ? `moved to ${tip.slice(0, 12)}` : 'was deleted'} by someone else while lanes committed the delivery`,
        ExitCode.unexpected,
      );
    return { commit, indexSynced: built.gitDir !== null && replaceLaneIndex(built.gitDir, built.index) };
  } finally {
    dropDeliveryTree(built);
  }
}

/**
 * Puts the private index in place of the lane's own, the way git replaces an index: an
 * exclusive `index.lock` (here a hard link of the private index, which fails as an
 * exclusive create does when the lock is held), then a rename. False when its index is
 * locked: the caller resets the index with git instead.
 */
function replaceLaneIndex(gitDir: string, index: string): boolean {
  const lock = join(gitDir, 'index.lock');
  try {
    linkSync(index, lock);
  } catch {
    return false;
  }
  try {
    renameSync(lock, join(gitDir, 'index'));
    return true;
  } catch {
    rmSync(lock, { force: true });
    return false;
  }
}
