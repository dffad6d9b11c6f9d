import { lstatSync } from 'node:fs';
import type { BigIntStats } from 'node:fs';
import { join } from 'node:path';
import type { RepoSessions } from '../runner/repo-sessions.js';
import { plainSettings } from './checkout-settings.js';
import { readIndex, statStamp } from './index-entries.js';
import type { IndexEntry } from './index-entries.js';
import { writeIndexFile } from './index-writer.js';
import type { CheckedOutFile } from './index-writer.js';
import { plainName } from './lane-checkout.js';
import { plainCommonDir } from './worktree-admin.js';
import { worktreeEntries } from './worktree-files.js';

// `git add -A` of a whole lane into an index file without git's process: what the lane's
// files are now, each file whose stat data is still what the index recorded taken as it is,
// each new or changed one hashed and stored by the repository's blob writer, each gone one
// dropped. It was the process on every exit's way (exit-tree.ts; docs/PERFORMANCE.md "An
// exit staged by lanes"). Trusting stat data is only sound where every change moves a
// file's change time (the caller's check, process/change-times.ts), and the result is git's
// only where nothing can be ignored or converted: no ignore rules anywhere (no .gitignore
// in the lane, none in the repository or the user's settings), plain settings
// (checkout-settings.ts), regular files under plain names, an index of plain entries (a
// version 2 file, no extension but the cached tree). Anything else: false, and git stages.

const MAX_FILES = 2000;

/** The lane's files (paths '/'-separated) with their lstat, or null when any is not plain. */
function laneFiles(lanePath: string): Map<string, BigIntStats> | null {
  const entries = worktreeEntries(lanePath, MAX_FILES);
  const plain = (path: string) => {
    const name = path.slice(path.lastIndexOf('/') + 1);
    return plainName(name) && name !== '.gitignore';
  };
  if (!entries || ![...entries.folders, ...entries.files].every(plain)) return null;
  return new Map(entries.files.map((path) => [path, lstatSync(join(lanePath, path), { bigint: true })]));
}

const commonDirs = new Map<string, string | null>();
function plainCommonDirOf(root: string): string | null {
  if (!commonDirs.has(root)) commonDirs.set(root, plainCommonDir(root));
  return commonDirs.get(root)!;
}

const modeOf = (stat: BigIntStats) => ((stat.mode & 0o100n) !== 0n ? 0o100755 : 0o100644);

/**
 * Stages the whole lane at `lanePath` as `git add -A` would, the result written to the index
 * file `indexPath` (the lane's own index or a copy of it, read first). False when this is not
 * a case done here: `indexPath` is then as it was.
 */
export async function stageWholeLane(
  sessions: RepoSessions,
  lanePath: string,
  indexPath: string,
): Promise<boolean> {
  const commonDir = plainCommonDirOf(sessions.root);
  if (commonDir === null || !(await plainSettings(sessions.root, commonDir)).staging) return false;
  const index = readIndex(indexPath, 20, 'all', MAX_FILES);
  if (index === null || index.version !== 2 || index.extensions.some((name) => name !== 'TREE')) return false;
  const recorded = new Map<string, IndexEntry>();
  for (const entry of index.entries) {
    if (entry.stage !== 0 || entry.special || (entry.mode !== 0o100644 && entry.mode !== 0o100755))
      return false;
    recorded.set(entry.path, entry);
  }
  const files = laneFiles(lanePath);
  if (files === null) return false;
  const staged: CheckedOutFile[] = await Promise.all(
    [...files].map(async ([path, stat]) => {
      const mode = modeOf(stat);
      const known = recorded.get(path);
      const unchanged = known !== undefined && known.mode === mode && known.stamp === statStamp(stat);
      const sha = unchanged ? known.sha : await sessions.blobs.write(join(lanePath, path));
      return { path, mode, sha, stat };
    }),
  );
  // (a file changed while it was hashed has a stamp other than the one kept: the commit's
  // check of the stamps, exit-tree.ts, builds the tree again then)
  writeIndexFile(indexPath, staged, null);
  return true;
}
