import type { ObjectReader, TreeEntry } from './object-reader.js';
import { treeChanges } from './tree-diff.js';
import type { TreeWriter } from './tree-writer.js';

// The merge of a lane commit into the batch head without a `git merge-tree` process, for
// the case where its result is certain: the lane commit's one parent (its lane base) is on
// the head's history, so it is the merge base; since then the lane and the batch head
// changed different files, and neither side deleted anything (no deletion, so no rename and
// no directory rename git could detect), both changed only regular files, and no path of
// one side is a folder of the other's. merge-ort's result is then the head's tree with the
// lane's files put in, which is what is written here (docs/DECISIONS.md, "Integration
// overhead, session 6"). Anything else is left to merge-tree: null.

const REGULAR = /^100(644|755) /;
/** Modes git writes today; a tree with any other (old tools' 100664) is left to merge-tree. */
const CANONICAL_MODES = new Set(['100644', '100755', '40000', '120000', '160000']);

export async function disjointMerge(
  objects: ObjectReader,
  trees: TreeWriter,
  head: string,
  laneCommit: string,
): Promise<string | null> {
  const lane = await objects.commit(laneCommit);
  if (!lane || lane.parents.length !== 1) return null;
  const [base, headCommit] = await Promise.all([objects.commit(lane.parents[0]!), objects.commit(head)]);
  if (!base || !headCommit) return null;
  // The lane base must be the merge base git would take: on the head's history.
  if ((await objects.reaches(base.sha, head)) !== true) return null;
  const [ours, theirs] = await Promise.all([
    treeChanges(objects, base.tree, headCommit.tree),
    treeChanges(objects, base.tree, lane.tree),
  ]);
  if (ours.size === 0) return lane.tree; // the head has not moved from the lane base
  if (!plain(ours) || !plain(theirs) || touching(ours, theirs)) return null;
  // (a name that is not UTF-8 would not come back as it was)
  if ([...ours.keys(), ...theirs.keys()].some((path) => path.includes('\uFFFD'))) return null;
  return putFiles(objects, trees, headCommit.tree, [...theirs]);
}

/** Only additions and changes of regular files. */
function plain(changes: Map<string, string>): boolean {
  return [...changes.values()].every((change) => REGULAR.test(change));
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

/** `tree` with each file of `files` ("<mode> <blob>" by path) put in; null if a tree is not as expected. */
async function putFiles(
  objects: ObjectReader,
  trees: TreeWriter,
  tree: string | null,
  files: [string, string][],
): Promise<string | null> {
  const list = tree === null ? [] : await objects.tree(tree);
  if (list === null) return null;
  if (list.some((e) => !CANONICAL_MODES.has(e.mode) || e.name.includes('\uFFFD'))) return null;
  const entries = new Map<string, TreeEntry>(list.map((e) => [e.name, e]));
  const inFolders = new Map<string, [string, string][]>();
  for (const [path, change] of files) {
    const slash = path.indexOf('/');
    if (slash < 0) {
      const [mode, sha] = change.split(' ') as [string, string];
      entries.set(path, { mode, name: path, sha });
      continue;
    }
    const folder = path.slice(0, slash);
    inFolders.set(folder, [...(inFolders.get(folder) ?? []), [path.slice(slash + 1), change]]);
  }
  for (const [folder, inside] of inFolders) {
    const existing = entries.get(folder);
    if (existing && existing.mode !== '40000') return null;
    const sub = await putFiles(objects, trees, existing?.sha ?? null, inside);
    if (sub === null) return null;
    entries.set(folder, { mode: '40000', name: folder, sha: sub });
  }
  return trees.write([...entries.values()]);
}
