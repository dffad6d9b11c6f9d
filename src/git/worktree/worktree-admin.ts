import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
} from 'node:fs';
import { writeFileSync } from 'node:fs';
import { removeTree } from './lane-files-thread.js'; // (off the coordinator's thread)
import { basename, dirname, join } from 'node:path';
import { linkedGitDir } from './worktree-files.js';

// A lane's entry in git's list of worktrees made and removed by lanes itself, as `git
// worktree add --no-checkout <path> <branch>` and `git worktree remove --force <path>` make
// and remove it, without their processes (two a lane made, git's own `symbolic-ref` being
// the second, and one a lane removed: docs/DECISIONS.md "Integration overhead"). Only for
// the plain layout git 2.39 writes for a repository with no worktree config: anything else
// is git's (null from here: the caller runs git).
//
// An entry is <common dir>/worktrees/<id>/ with `HEAD`, `commondir` and `gitdir`, and the
// lane's `.git` file naming it. It is written under another name outside that folder and
// renamed into it, so a `git worktree` or `git branch` running beside it (they read every
// entry, unlocked) sees it whole or not at all; removed, it is renamed out before it is
// deleted. git's worktree bookkeeping stays serialised (git.ts): these need no turn in it.
// Each is synchronous up to its last rename: no crash point of the loop falls inside it.

/** git's own names for an entry that we write as it does; anything else goes to git. */
const PLAIN_ID = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

let scratch = 0;

/** The common git directory of a repository whose main worktree is `repoRoot`, if plain. */
export function plainCommonDir(repoRoot: string): string | null {
  try {
    const dir = realpathSync(join(repoRoot, '.git'));
    if (!statSync(dir).isDirectory()) return null;
    // Worktree config (`extensions.worktreeConfig`, per-worktree `config.worktree`) and
    // included files are what git would copy or read into a new entry: git's then.
    const config = readFileSync(join(dir, 'config'), 'utf8').toLowerCase();
    if (config.includes('worktreeconfig') || config.includes('[include')) return null;
    return dir;
  } catch {
    return null;
  }
}

/**
 * Makes `path` a linked worktree on `branch` (which exists) with nothing checked out, as
 * `git worktree add --no-checkout` would. False when this is not a case written here (the
 * path is not new or empty, its name is not a plain id, an entry of that id exists): the
 * caller asks git then, which knows what to do or says what is wrong.
 */
export function addUnpopulated(commonDir: string, path: string, branch: string): boolean {
  const id = basename(path);
  const entry = join(commonDir, 'worktrees', id);
  if (!PLAIN_ID.test(id)) return false;
  if (existsSync(path) && readdirSync(path).length > 0) return false;
  mkdirSync(dirname(path), { recursive: true });
  const dotGit = join(realpathSync(dirname(path)), id, '.git');
  if (existsSync(entry) && !dropStaleEntry(commonDir, entry, dotGit)) return false;
  // The entry first, then the lane folder, each made under a name of its own and renamed
  // into place: a kill between the two leaves an entry without its lane (dropped by the
  // next add of that lane, above), never a folder with a `.git` that names no entry.
  const suffix = `${id}-${process.pid}-${++scratch}`;
  const made = join(commonDir, `lanes-new-${suffix}`);
  const lane = join(dirname(path), `.lanes-new-${suffix}`);
  mkdirSync(made);
  writeFileSync(join(made, 'commondir'), '../..\n');
  writeFileSync(join(made, 'gitdir'), `${dotGit}\n`);
  writeFileSync(join(made, 'HEAD'), `ref: refs/heads/${branch}\n`);
  mkdirSync(lane);
  writeFileSync(join(lane, '.git'), `gitdir: ${entry}\n`);
  mkdirSync(join(commonDir, 'worktrees'), { recursive: true });
  try {
    renameSync(made, entry);
  } catch (error) {
    // (an entry of that id made meanwhile: ours goes, and git is asked)
    void removeTree(made, lane);
    if (isCode(error, 'ENOTEMPTY') || isCode(error, 'EEXIST')) return false;
    throw error;
  }
  renameSync(lane, path); // (onto an empty folder there, if one is: rename replaces it)
  return true;
}

/**
 * Removes the entry of a lane at `path` that is not there (an add killed between its entry
 * and its folder), so that git's own add of it is not refused: true when there was one.
 */
export function dropStaleLane(commonDir: string, path: string): boolean {
  const id = basename(path);
  const entry = join(commonDir, 'worktrees', id);
  if (!PLAIN_ID.test(id) || !existsSync(entry) || !existsSync(dirname(path))) return false;
  return dropStaleEntry(commonDir, entry, join(realpathSync(dirname(path)), id, '.git'));
}

/** An entry of this lane's id whose lane is not there (an add killed halfway): removed. */
function dropStaleEntry(commonDir: string, entry: string, dotGit: string): boolean {
  try {
    if (readFileSync(join(entry, 'gitdir'), 'utf8').trim() !== dotGit || existsSync(dotGit)) return false;
  } catch {
    return false;
  }
  const gone = join(commonDir, `lanes-gone-${basename(entry)}-${process.pid}-${++scratch}`);
  renameSync(entry, gone);
  void removeTree(gone);
  return true;
}

/**
 * Removes the linked worktree at `path` and its entry as `git worktree remove --force`
 * does. For a lane with nothing to lose only (the caller has proven it). Null when this is
 * not a case done here (not a plain entry of this repository, locked): the caller asks git.
 * Otherwise what failed, or '' when removed.
 *
 * git's process, once started, finishes a remove even when lanes is killed meanwhile; here
 * the entry and then the lane are renamed away at once (nothing of the loop runs between
 * the two), and only then deleted: a crash leaves the lane whole or gone, never half
 * deleted, and at worst a folder of the deletion's own name (`.lanes-gone-*`).
 */
export async function removeLinked(commonDir: string, path: string): Promise<string | null> {
  const gitDir = linkedGitDir(path);
  if (gitDir === null) return null;
  const id = basename(gitDir);
  try {
    if (realpathSync(dirname(gitDir)) !== join(commonDir, 'worktrees') || !PLAIN_ID.test(id)) return null;
    if (existsSync(join(gitDir, 'locked'))) return null;
    const pointsBack = readFileSync(join(gitDir, 'gitdir'), 'utf8').trim();
    if (pointsBack !== join(realpathSync(path), '.git')) return null;
  } catch {
    return null;
  }
  const suffix = `${id}-${process.pid}-${++scratch}`;
  const entryGone = join(commonDir, `lanes-gone-${suffix}`);
  const laneGone = join(dirname(path), `.lanes-gone-${suffix}`);
  renameSync(gitDir, entryGone);
  try {
    renameSync(path, laneGone);
  } catch (error) {
    renameSync(entryGone, gitDir); // (the lane as it was: git says what is wrong)
    return `could not remove ${path}: ${(error as Error).message}`;
  }
  await removeTree(laneGone, entryGone);
  sweepLeftovers(commonDir, dirname(path));
  return '';
}

const swept = new Set<string>();

/**
 * What a crashed lanes left of its removals and adds (`lanes-gone-*`, `lanes-new-*`, a lane's
 * `.lanes-gone-*`: named with the pid that made them), of processes no longer running only:
 * deleted once a folder and process.
 */
function sweepLeftovers(...folders: string[]): void {
  for (const folder of folders) {
    if (swept.has(folder)) continue;
    swept.add(folder);
    let names: string[] = [];
    try {
      names = readdirSync(folder);
    } catch {
      continue;
    }
    for (const name of names) {
      const pid = /^\.?lanes-(?:gone|new)-.+-(\d+)-\d+$/.exec(name)?.[1];
      if (pid !== undefined && !running(Number(pid))) void removeTree(join(folder, name));
    }
  }
}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return !isCode(error, 'ESRCH');
  }
}

function isCode(error: unknown, code: string): boolean {
  return (error as NodeJS.ErrnoException).code === code;
}
