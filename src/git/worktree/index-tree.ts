import type { TreeEntry } from '../runner/object-reader.js';
import type { TreeWriter } from '../runner/tree-writer.js';
import { readIndex } from './index-entries.js';

// `git write-tree` without its process: the tree an index makes, written through the
// repository's long-lived `git mktree --batch` (which checks every entry's object exists with
// the type its mode says), folders the index's cached tree holds taken from it as git takes
// them. It was one of the processes of every lane's exit (exit-tree.ts).

/** Past this, building the folders on the loop's thread costs more than git's process. */
const MAX_ENTRIES = 10_000;

interface Folder {
  entries: TreeEntry[];
  folders: Map<string, Folder>;
}

/**
 * The tree of the index at `indexPath`, or null where git is asked instead: an index this
 * does not read, an empty one or one past MAX_ENTRIES, one with conflicts or entries git's
 * write-tree treats specially (intent-to-add, skip-worktree).
 */
export async function writeIndexTree(
  trees: TreeWriter,
  indexPath: string,
  oidBytes: number,
): Promise<string | null> {
  const read = readIndex(indexPath, oidBytes, 'all', MAX_ENTRIES);
  if (read === null || read.entries.length === 0) return null;
  if (read.rootTree !== null) return read.rootTree;
  if (read.entries.some((e) => e.stage !== 0 || e.special)) return null;
  let cached: Map<string, string>;
  try {
    cached = read.treeExtension ? cachedTrees(read.treeExtension, oidBytes) : new Map();
  } catch {
    return null; // (a cached tree cut short)
  }
  const root: Folder = { entries: [], folders: new Map() };
  for (const entry of read.entries) {
    const parts = entry.path.split('/');
    let folder = root;
    for (const part of parts.slice(0, -1)) {
      let next = folder.folders.get(part);
      if (!next) folder.folders.set(part, (next = { entries: [], folders: new Map() }));
      folder = next;
    }
    folder.entries.push({ mode: entry.mode.toString(8), name: parts.at(-1)!, sha: entry.sha });
  }
  const write = async (folder: Folder, path: string): Promise<string> => {
    const known = cached.get(path);
    if (known !== undefined) return known;
    const below = await Promise.all(
      [...folder.folders].map(async ([name, sub]) => ({
        mode: '40000',
        name,
        sha: await write(sub, path === '' ? name : `${path}/${name}`),
      })),
    );
    return trees.write([...folder.entries, ...below]);
  };
  return write(root, '');
}

/**
 * The valid trees of a TREE extension by folder ('' the root): each node is its path
 * component, NUL, its entry count (-1: not valid) and subtree count, LF, its tree's name
 * when valid, then its subtrees (gitformat-index(5)).
 */
export function cachedTrees(data: Buffer, oidBytes: number): Map<string, string> {
  const out = new Map<string, string>();
  let off = 0;
  const node = (prefix: string): void => {
    const nul = data.indexOf(0, off);
    const lf = nul < 0 ? -1 : data.indexOf(10, nul);
    if (lf < 0) throw new RangeError('cached tree cut short');
    const path = prefix + data.toString('utf8', off, nul);
    const [count, subtrees] = data
      .toString('latin1', nul + 1, lf)
      .split(' ')
      .map(Number) as [number, number];
    off = lf + 1;
    if (count >= 0) {
      if (off + oidBytes > data.length) throw new RangeError('cached tree cut short');
      out.set(path, data.toString('hex', off, off + oidBytes));
      off += oidBytes;
    }
    for (let i = 0; i < subtrees; i++) node(path === '' ? '' : `${path}/`);
  };
  node('');
  return out;
}
