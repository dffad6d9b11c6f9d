import type { ObjectReader, TreeEntry } from '../runner/object-reader.js';

// "What a change does, path by path" read from the trees themselves through the object
// reader: the same answer as `diff-tree -r --raw --no-renames` (the new side's "<mode>
// <blob>", "0 deleted" for a deletion), descending only into subtrees that differ.

const TREE_MODE = /^0*40000$/;

/** Regular files as git reports them: 100644 or 100755, whatever older tools wrote. */
function canonicalMode(mode: string): string {
  if (!mode.startsWith('100')) return mode.padStart(6, '0');
  return (parseInt(mode, 8) & 0o100) !== 0 ? '100755' : '100644';
}

export async function treeChanges(
  objects: ObjectReader,
  from: string,
  to: string,
): Promise<Map<string, string>> {
  const changes = new Map<string, string>();
  await walk(objects, from, to, '', changes);
  return changes;
}

async function entries(objects: ObjectReader, tree: string | null): Promise<Map<string, TreeEntry>> {
  if (tree === null) return new Map();
  const list = await objects.tree(tree);
  if (list === null) throw new Error(`tree ${tree} not found`);
  return new Map(list.map((e) => [e.name, e]));
}

async function walk(
  objects: ObjectReader,
  from: string | null,
  to: string | null,
  prefix: string,
  changes: Map<string, string>,
): Promise<void> {
  if (from === to) return;
  const [a, b] = await Promise.all([entries(objects, from), entries(objects, to)]);
  for (const name of new Set([...a.keys(), ...b.keys()])) {
    const left = a.get(name);
    const right = b.get(name);
    if (left && right && left.sha === right.sha && canonicalMode(left.mode) === canonicalMode(right.mode))
      continue;
    const path = `${prefix}${name}`;
    const leftTree = left !== undefined && TREE_MODE.test(left.mode);
    const rightTree = right !== undefined && TREE_MODE.test(right.mode);
    if (leftTree || rightTree)
      await walk(objects, leftTree ? left.sha : null, rightTree ? right.sha : null, `${path}/`, changes);
    if (right && !rightTree) changes.set(path, `${canonicalMode(right.mode)} ${right.sha}`);
    else if (left && !leftTree) changes.set(path, '0 deleted');
  }
}
