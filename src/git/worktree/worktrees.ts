import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { git, splitNul } from '../runner/git.js';
import { readLaneStatus } from './lane-status.js';
import type { LaneStatus } from './lane-status.js';
import { isUnpopulated, linkedGitDir } from './worktree-files.js';
import type { WorktreeEntry } from './worktree-files.js';

export type { WorktreeEntry };
import { NO_FACTS, type OfferFacts } from '../../core/ports/git-port.js';

// Worktrees: listing them, and reading the facts lane admission decides from.

export async function listWorktrees(cwd: string): Promise<WorktreeEntry[]> {
  const out = await git(cwd, ['worktree', 'list', '--porcelain', '-z']);
  const entries: WorktreeEntry[] = [];
  let current: WorktreeEntry | null = null;
  for (const field of out.stdout.split('\0')) {
    if (field.startsWith('worktree ')) {
      current = { path: field.slice('worktree '.length), head: null, branch: null };
      entries.push(current);
    } else if (current && field.startsWith('HEAD ')) current.head = field.slice(5);
    else if (current && field.startsWith('branch '))
      current.branch = field.slice(7).replace(/^refs\/heads\//, '');
  }
  return entries;
}

export function realpathOrNull(path: string): string | null {
  try {
    return realpathSync.native(path);
  } catch {
    return null;
  }
}

/** The worktree of `worktrees` at `path`, compared real (symlinks resolved); none when nothing is there. */
export function findWorktree<W extends { path: string }>(
  worktrees: readonly W[],
  path: string,
): W | undefined {
  // (git lists real paths, so the path as given is found without resolving each listed one)
  const same = worktrees.find((w) => w.path === path);
  if (same) return existsSync(path) ? same : undefined;
  const real = realpathOrNull(path);
  if (real === null) return undefined;
  return worktrees.find((w) => realpathOrNull(w.path) === real);
}

/** The repository's worktree at `path`, as `git worktree list` has it. */
export async function worktreeAt(root: string, path: string): Promise<WorktreeEntry | undefined> {
  if (!existsSync(path)) return undefined;
  return findWorktree(await listWorktrees(root), path);
}

/** Facts about an offered lane path, read from git only (the core's OfferFacts). */
export async function inspectLane(path: string, commonDir: string): Promise<OfferFacts> {
  const none: OfferFacts = { ...NO_FACTS };
  const real = realpathOrNull(path);
  if (real === null) return none;
  const fast = await inspectLinkedWorktree(real, commonDir);
  if (fast) return fast;
  // One rev-parse answers where the lane belongs, its HEAD and its branch (admission runs
  // for every offered lane); the status runs beside it. A HEAD without a commit, or a path
  // outside any repository, fails it, and the step-by-step reading below tells which.
  const [info, clean] = await Promise.all([
    git(
      real,
      [
        'rev-parse',
        '--path-format=absolute',
        '--git-common-dir',
        '--show-toplevel',
        'HEAD',
        '--symbolic-full-name',
        'HEAD',
        '--',
      ],
      { okCodes: [128] },
    ),
    isClean(real).catch(() => false),
  ]);
  if (info.exitCode === 0) {
    const [common = '', top = '', head = '', ref = ''] = info.stdout.split('\n');
    return {
      realpath: real,
      sameRepository: realpathOrNull(common) === realpathOrNull(commonDir),
      isWorktreeRoot: realpathOrNull(top) === real,
      branch: ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : null,
      head,
      clean,
    };
  }
  const where = await git(
    real,
    ['rev-parse', '--path-format=absolute', '--git-common-dir', '--show-toplevel'],
    {
      okCodes: [128],
    },
  );
  if (where.exitCode !== 0) return { ...none, realpath: real };
  const [common = '', top = ''] = where.stdout.trim().split('\n');
  const branchOut = await git(real, ['symbolic-ref', '--quiet', '--short', 'HEAD'], { okCodes: [1, 128] });
  const headOut = await git(real, ['rev-parse', '--verify', '--quiet', 'HEAD'], { okCodes: [1, 128] });
  return {
    realpath: real,
    sameRepository: realpathOrNull(common) === realpathOrNull(commonDir),
    isWorktreeRoot: realpathOrNull(top) === real,
    branch: branchOut.exitCode === 0 ? branchOut.stdout.trim() : null,
    head: headOut.exitCode === 0 ? headOut.stdout.trim() : null,
    clean,
  };
}

/**
 * The usual offered lane, a linked worktree (a `.git` file naming its git directory):
 * the repository it belongs to is read from that file and its `commondir`, as git reads
 * them, and HEAD, branch and cleanliness from one status. Anything else: null (the caller
 * asks git step by step).
 */
async function inspectLinkedWorktree(real: string, commonDir: string): Promise<OfferFacts | null> {
  const gitDir = linkedGitDir(real);
  if (gitDir === null) return null;
  let common: string;
  try {
    common = resolve(gitDir, readFileSync(resolve(gitDir, 'commondir'), 'utf8').trim());
  } catch {
    return null;
  }
  const status = await readLaneStatus(real).catch(() => null);
  if (status === null || status.head === null) return null;
  return {
    realpath: real,
    sameRepository: realpathOrNull(common) === realpathOrNull(commonDir),
    isWorktreeRoot: true,
    branch: status.branch,
    head: status.head,
    clean: status.entries.length === 0,
  };
}

/** Nothing changed, staged or untracked; a lane not checked out yet (isUnpopulated) holds nothing. */
export async function isClean(path: string): Promise<boolean> {
  if (isUnpopulated(path)) return true; // (git would read every file as deleted)
  const out = await git(path, [
    '--no-optional-locks',
    'status',
    '--porcelain',
    '-z',
    '--untracked-files=all',
    '--ignore-submodules=none',
  ]);
  return out.stdout === '';
}

/**
 * Every path the lane changed since `base`: committed or not, staged or not, and new
 * untracked files (ignored files excluded, so setup output such as node_modules is not a change).
 */
export async function changedPaths(lanePath: string, base: string, status?: LaneStatus): Promise<string[]> {
  if (!existsSync(lanePath)) return [];
  try {
    return await readChangedPaths(lanePath, base, status);
  } catch (error) {
    // The lane was deleted while git looked at it: it has no changes any more.
    if (!existsSync(lanePath)) return [];
    throw error;
  }
}

/**
 * What a lane changed, read when its executor exited (nothing writes to it after that):
 * the tick's QA, moments later, takes it from here instead of asking git again.
 */
const readAtExit = new Map<string, string[]>();

/** changedPaths, kept for the next `takeChangedPaths` of the same lane and base. */
export async function changedPathsAtExit(lanePath: string, base: string): Promise<string[]> {
  return keepChangedPaths(lanePath, base, await changedPaths(lanePath, base));
}

/** Paths read at the exit another way (exit-tree.ts), kept like changedPathsAtExit's. */
export function keepChangedPaths(lanePath: string, base: string, paths: string[]): string[] {
  readAtExit.set(`${lanePath}\0${base}`, paths);
  return paths;
}

/** What `changedPathsAtExit` read for this lane and base (once), else a fresh changedPaths. */
export function takeChangedPaths(lanePath: string, base: string): Promise<string[]> {
  const key = `${lanePath}\0${base}`;
  const kept = readAtExit.get(key);
  readAtExit.delete(key);
  return kept ? Promise.resolve(kept) : changedPaths(lanePath, base);
}

/** `known`: the lane's status, read by the caller a moment ago (not read again). */
async function readChangedPaths(lanePath: string, base: string, known?: LaneStatus): Promise<string[]> {
  // One status tells it when HEAD is still the base (the executor made no commit of its own).
  const status = known ?? (await readLaneStatus(lanePath));
  if (status && status.head === base && status.paths) return status.paths;
  const [tracked, untracked] = await Promise.all([
    git(lanePath, ['diff', '--name-only', '-z', '--no-renames', '--no-ext-diff', base, '--']),
    git(lanePath, ['ls-files', '--others', '--exclude-standard', '-z']),
  ]);
  return [...new Set([...splitNul(tracked.stdout), ...splitNul(untracked.stdout)])].sort();
}
