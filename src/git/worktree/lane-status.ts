import { statSync } from 'node:fs';
import { join } from 'node:path';
import { git, splitNul } from '../runner/git.js';
import { linkedGitDir } from './worktree-files.js';

// One `git status --porcelain=v2 --branch` of a lane answers what used to take three
// processes (is it clean, what did it change, where is HEAD): docs/DECISIONS.md "Git speed".

export interface LaneStatus {
  /** HEAD's commit, or null before the first commit. */
  head: string | null;
  /** Short branch name, or null when detached. */
  branch: string | null;
  /** The entry records (header lines left out): empty when the lane is clean. */
  entries: string[];
  /** True when the index differs from HEAD somewhere (something is staged). */
  staged: boolean;
  /**
   * The paths changed against HEAD (staged or not, and new untracked files) when status
   * alone tells them exactly: no path both staged and changed again, unmerged or a
   * submodule. Otherwise null.
   */
  paths: string[] | null;
}

/** The lane's index file as it was: which file, its size and its change time (ns). */
function indexStamp(lanePath: string): string | null {
  const gitDir = linkedGitDir(lanePath);
  if (gitDir === null) return null;
  try {
    const st = statSync(join(gitDir, 'index'), { bigint: true });
    return `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
  } catch {
    return null;
  }
}

/** Per lane, the last status that found its index equal to HEAD, and the index file then. */
const unstaged = new Map<string, { head: string; stamp: string }>();

/**
 * True when the last status of this lane found nothing staged on `head`, and its index file
 * has not been written since: the index holds exactly `head`'s tree then (the delivery
 * commit starts from a copy of it instead of reading the tree again).
 */
export function indexHolds(lanePath: string, head: string): boolean {
  const seen = unstaged.get(lanePath);
  return seen !== undefined && seen.head === head && seen.stamp === indexStamp(lanePath);
}

export async function readLaneStatus(lanePath: string): Promise<LaneStatus | null> {
  const stamp = indexStamp(lanePath); // before git looks: a write meanwhile changes it
  const status = await runStatus(lanePath);
  if (status && stamp !== null && status.head !== null && !status.staged)
    unstaged.set(lanePath, { head: status.head, stamp });
  else unstaged.delete(lanePath);
  return status;
}

async function runStatus(lanePath: string): Promise<LaneStatus | null> {
  const out = await git(
    lanePath,
    [
      // (no index write-back: a look at a lane creates no file; docs/DECISIONS.md "Git speed")
      '--no-optional-locks',
      'status',
      '--porcelain=v2',
      '-z',
      '--branch',
      '--untracked-files=all',
      '--ignore-submodules=none',
      '--no-renames',
    ],
    { okCodes: [128] },
  );
  if (out.exitCode !== 0) return null;
  return parseLaneStatus(out.stdout);
}

export function parseLaneStatus(stdout: string): LaneStatus {
  let head: string | null = null;
  let branch: string | null = null;
  const entries: string[] = [];
  const paths: string[] = [];
  let exact = true;
  let staged = false;
  for (const record of splitNul(stdout)) {
    if (record.startsWith('# branch.oid ')) {
      const oid = record.slice('# branch.oid '.length);
      head = /^[0-9a-f]{40,64}$/.test(oid) ? oid : null;
    } else if (record.startsWith('# branch.head ')) {
      const name = record.slice('# branch.head '.length);
      branch = name === '(detached)' ? null : name;
    } else if (record.startsWith('#')) continue;
    else {
      entries.push(record);
      if (record.startsWith('? ')) paths.push(record.slice(2));
      else if (record.startsWith('1 ')) {
        // 1 XY sub mH mI mW hH hI path
        const fields = record.split(' ');
        const [x, y] = [...(fields[1] ?? '..')];
        if (x !== '.') staged = true;
        if ((x !== '.' && y !== '.') || fields[2] !== 'N...') exact = false;
        paths.push(fields.slice(8).join(' '));
      } else {
        staged = true;
        exact = false; // unmerged (u) or anything newer: read the long way
      }
    }
  }
  return { head, branch, entries, staged, paths: exact ? [...new Set(paths)].sort() : null };
}
