import { lstatSync, readdirSync } from 'node:fs';
import type { Dirent } from 'node:fs';
import { dirname, join } from 'node:path';
import { changeTimesAlwaysMove } from '../../process/change-times.js';
import { readIndex, statStamp } from './index-entries.js';
import type { ObjectReader } from '../runner/object-reader.js';
import type { TreeWriter } from '../runner/tree-writer.js';
import { writeIndexTree } from './index-tree.js';
import { linkedGitDir, linkedHeadRef } from './worktree-files.js';

// Whether a lane is clean, proven from its files without a `git status` (the one `git
// worktree remove` starts to check it would lose nothing): its index makes exactly its
// HEAD's tree (the index's cached tree), every file the index holds still has the stat data
// git recorded for it, and the lane holds no other file or folder at all (ignored or not).
// That is a clean lane to git too: stat data equal is git's own proof a file is unchanged,
// wherever every change moves the change time (process/change-times.ts). Anything else, or
// anything this does not read (a submodule, a sparse or split index, an entry git treats
// specially, more files than MAX_FILES), is not proven: git looks then.

/** Past this, reading every file's stat data on the loop's thread costs more than git's process. */
const MAX_FILES = 2_000;

const REGULAR = 0o100000;
const SYMLINK = 0o120000;
const TYPE = 0o170000;

/**
 * `trees`: where the index's tree is written when its cached tree does not say it (an index
 * lanes staged a delivery in, whose tree was not written by git: index-tree.ts).
 */
export async function provenClean(
  objects: ObjectReader,
  lanePath: string,
  trees?: TreeWriter,
  /** The commit a linked worktree's HEAD is at (LaneWorktrees.linkedHead: from its files where it can); absent: the reader's. */
  headOf?: (gitDir: string) => Promise<string | null>,
): Promise<boolean> {
  try {
    return await proveClean(objects, lanePath, trees, headOf);
  } catch {
    return false; // (a file it cannot look at: a path through a file, no permission; git looks)
  }
}

async function proveClean(
  objects: ObjectReader,
  lanePath: string,
  trees?: TreeWriter,
  headOf?: (gitDir: string) => Promise<string | null>,
): Promise<boolean> {
  const gitDir = linkedGitDir(lanePath);
  if (gitDir === null || !changeTimesAlwaysMove(dirname(lanePath))) return false;
  const head = await (headOf ? headOf(gitDir) : objects.resolve(linkedHeadRef(gitDir)));
  const tree = head === null ? null : (await objects.commit(head))?.tree;
  if (!tree) return false;
  const indexPath = join(gitDir, 'index');
  const index = readIndex(indexPath, tree.length / 2, 'all', MAX_FILES);
  if (index === null) return false;
  const made = index.rootTree ?? (trees ? await writeIndexTree(trees, indexPath, tree.length / 2) : null);
  if (made !== tree) return false;
  const files = new Set<string>();
  const folders = new Set<string>();
  for (const entry of index.entries) {
    const type = entry.mode & TYPE;
    if (entry.stage !== 0 || entry.special || (type !== REGULAR && type !== SYMLINK)) return false;
    const st = lstatSync(join(lanePath, entry.path), { bigint: true, throwIfNoEntry: false });
    if (!st || Number(st.mode & BigInt(TYPE)) !== type || statStamp(st) !== entry.stamp) return false;
    files.add(entry.path);
    for (let i = entry.path.indexOf('/'); i >= 0; i = entry.path.indexOf('/', i + 1))
      folders.add(entry.path.slice(0, i));
  }
  return holdsOnly(lanePath, '', files, folders);
}

/** True when the folder holds only those files and folders (its `.git` aside, at the top). */
function holdsOnly(root: string, prefix: string, files: Set<string>, folders: Set<string>): boolean {
  let names: Dirent[];
  try {
    names = readdirSync(join(root, prefix), { withFileTypes: true });
  } catch {
    return false;
  }
  for (const d of names) {
    if (prefix === '' && d.name === '.git') continue;
    const path = `${prefix}${d.name}`;
    if (d.isDirectory() && !d.isSymbolicLink()) {
      if (!folders.has(path) || !holdsOnly(root, `${path}/`, files, folders)) return false;
    } else if (!files.has(path)) return false;
  }
  return true;
}
