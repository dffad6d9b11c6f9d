import type { ObjectReader, TreeEntry } from '../runner/object-reader.js';
import { treeChanges } from '../worktree/tree-diff.js';
import type { TreeWriter } from '../runner/tree-writer.js';

// The merge of a lane commit into the batch head without a `git merge-tree` process, for
// the case where its result is certain: the lane commit's one parent (its lane base) is on
// the head's history, so it is the merge base; since then the lane and the batch head
// changed different files, and neither side deleted anything (no deletion, so no rename and
// no directory rename git could detect), both changed only regular files, and no path of
// one side is a folder of the other's. merge-ort then resolves every entry the trivial way,
// and so does this: an entry only one side changed is taken from that side as it is (a
// whole subtree, its object unchanged), and only a folder both sides changed is written
// anew, from its entries (docs/PERFORMANCE.md, "Git processes"). Anything
// else, or any failure, is left to merge-tree: null.

const REGULAR = /^100(644|755) /;
const TREE_MODE = /^0*40000$/;
/** Modes as git writes them; a folder written anew with any other (old tools' 100664) is left to merge-tree. */
const CANONICAL_MODES = new Set(['100644', '100755', '40000', '120000', '160000']);

export async function disjointMerge(
  objects: ObjectReader,
  trees: TreeWriter,
  head: string,
  laneCommit: string,
): Promise<string | null> {
  try {
    const lane = await objects.commit(laneCommit);
    if (!lane || lane.parents.length !== 1) return null;
    const [base, headCommit] = await Promise.all([objects.commit(lane.parents[0]!), objects.commit(head)]);
    if (!base || !headCommit) return null;
    if (headCommit.tree === base.tree) return lane.tree; // the head changed no file since the lane base
    // The lane base must be the merge base git would take: on the head's history.
    if ((await objects.reaches(base.sha, head)) !== true) return null;
    const [ours, theirs] = await Promise.all([
      treeChanges(objects, base.tree, headCommit.tree),
      treeChanges(objects, base.tree, lane.tree),
    ]);
    if (!plain(ours) || !plain(theirs) || touching(ours, theirs)) return null;
    return await mergeFolder(objects, trees, base.tree, headCommit.tree, lane.tree);
  } catch {
    return null; // (a tree not found, a session that ended: merge-tree answers instead)
  }
}

/** Only additions and changes of regular files, under names that read back as they are. */
function plain(changes: Map<string, string>): boolean {
  return [...changes].every(([path, change]) => REGULAR.test(change) && !path.includes('\uFFFD'));
}

/** A path both changed, or a path of one that is a folder on the other side. */
function touching(a: Map<string, string>, b: Map<string, string>): boolean {
  const folders = (paths: Iterable<string>) => {
    const all = new Set<string>();
    for (const path of paths)
      for (let i = path.indexOf('/'); i >= 0; i = path.indexOf('/', i + 1)) all.add(path.slice(0, i));
    return all;
  };
  const foldersA = folders(a.keys());
  const foldersB = folders(b.keys());
  for (const path of b.keys()) if (a.has(path) || foldersA.has(path)) return true;
  for (const path of a.keys()) if (foldersB.has(path)) return true;
  return false;
}

const same = (x: TreeEntry | undefined, y: TreeEntry | undefined): boolean =>
  x === y || (x !== undefined && y !== undefined && x.sha === y.sha && x.mode === y.mode);

/** The three-way merge of one folder (its tree in base, head and lane); null if not trivial. */
async function mergeFolder(
  objects: ObjectReader,
  trees: TreeWriter,
  base: string | null,
  head: string,
  lane: string,
): Promise<string | null> {
  const read = async (sha: string | null) =>
    new Map((sha === null ? [] : ((await objects.tree(sha)) ?? [])).map((e) => [e.name, e]));
  const [b, h, l] = await Promise.all([read(base), read(head), read(lane)]);
  const merged: TreeEntry[] = [];
  for (const name of new Set([...h.keys(), ...l.keys()])) {
    const [be, he, le] = [b.get(name), h.get(name), l.get(name)];
    let entry: TreeEntry | undefined;
    if (same(he, be) || same(he, le)) entry = le;
    else if (same(le, be)) entry = he;
    else if (he && le && TREE_MODE.test(he.mode) && TREE_MODE.test(le.mode)) {
      const sub = await mergeFolder(
        objects,
        trees,
        be && TREE_MODE.test(be.mode) ? be.sha : null,
        he.sha,
        le.sha,
      );
      if (sub === null) return null;
      entry = { mode: '40000', name, sha: sub };
    } else return null;
    if (!entry) continue;
    // (this folder is written anew: git would write every entry's mode canonical)
    if (!CANONICAL_MODES.has(entry.mode) || entry.name.includes('\uFFFD')) return null;
    merged.push(entry);
  }
  return trees.write(merged);
}
