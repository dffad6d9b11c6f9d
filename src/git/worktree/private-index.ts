import { copyFileSync, statSync, utimesSync } from 'node:fs';
import { git, gitLine } from '../runner/git.js';
import type { RepoSessions } from '../runner/repo-sessions.js';
import { stageWholeLane } from './lane-staging.js';
import { writeIndexTree } from './index-tree.js';

// A lane's private index (GIT_INDEX_FILE): a copy of its own index that lanes stages into
// and writes a tree from, leaving the lane's index as it is until a commit replaces it
// (delivery.ts, exit-tree.ts).

/**
 * A copy of an index file that git reads as it reads the original: git takes an entry whose
 * file was changed in the same clock tick as the index was written ("racily clean") for
 * changed only by comparing the entry's mtime with the index file's, so the copy gets the
 * original's mtime (1-2 microseconds earlier, never later: every entry racy to the original,
 * and perhaps a few more, goes on being checked by its content).
 */
export function copyIndex(from: string, to: string): void {
  copyFileSync(from, to);
  const { atimeNs, mtimeNs } = statSync(from, { bigint: true });
  const seconds = (ns: bigint) => Number(ns / 1000n - 1n) / 1e6;
  utimesSync(to, seconds(atimeNs), seconds(mtimeNs));
}

/**
 * `git add -A` of `paths` (or of the whole lane) into the private index, then its tree
 * (staged by lanes and written through the repository's tree writer where they can: no
 * `add` or `write-tree` process).
 */
export async function addAndWriteTree(
  lanePath: string,
  index: string,
  paths: readonly string[] | 'all',
  through?: { sessions: RepoSessions; oidBytes: number },
): Promise<string> {
  const env = { GIT_INDEX_FILE: index };
  if (paths === 'all') {
    // (the whole lane staged by lanes where it can: lane-staging.ts)
    const staged = through && (await stageWholeLane(through.sessions, lanePath, index).catch(() => false));
    if (!staged) await git(lanePath, ['add', '-A'], { env });
  } else if (paths.length > 0)
    await git(lanePath, ['--literal-pathspecs', 'add', '-A', '--', ...paths], { env });
  const written = through ? await writeIndexTree(through.sessions.trees, index, through.oidBytes) : null;
  return written ?? gitLine(lanePath, ['write-tree'], { env });
}
