import { existsSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { changeTimesAlwaysMove } from '../process/change-times.js';
import { copyIndex, dropDeliveryTree } from './delivery.js';
import type { DeliveryTree } from './delivery.js';
import { git, gitLine } from './git.js';
import { indexStamps } from './index-entries.js';
import type { RepoSessions } from './repo-sessions.js';
import { treeChanges } from './tree-diff.js';
import { linkedGitDir } from './worktree-files.js';

// What a lane changed when its executor exited, read as the tree of the whole lane: its
// index copied into a private one, `git add -A` there and `write-tree` (DESIGN §6, "The
// delivery commit"). The changed paths are that tree's changes against the base, read
// through the object reader; they are what `git status` would list, committed or not,
// staged or not, new files included, ignored ones not. When all of them are the delivery's
// (all inside the scope), the tree is the delivery's tree as well, and the commit takes it
// (RepoGit.stageDelivery) while no file of it changed since: git recorded each file's stat
// data in the private index when it read it, and the commit compares it with the file's.
// That proves a file unchanged only where every change moves the change time
// (process/change-times.ts); anywhere else the caller reads a status, as before.

/** Each exit tree's private index, in the lane's git directory (its own file: see takeExitTree). */
let made = 0;
const exitIndexName = () => `lanes-exit-index.${process.pid}.${++made}`;

/** Exit trees by lane and base, until the lane's delivery is staged (takeExitTree). */
const kept = new Map<string, DeliveryTree>();

const keyOf = (lanePath: string, base: string) => `${lanePath}\0${base}`;

/** The paths the lane changed since `base` (sorted), its exit tree kept; null: read them another way. */
export async function readExitTree(
  sessions: RepoSessions,
  lanePath: string,
  base: string,
): Promise<string[] | null> {
  const gitDir = linkedGitDir(lanePath);
  if (gitDir === null || !existsSync(join(gitDir, 'index'))) return null;
  if (!changeTimesAlwaysMove(dirname(lanePath))) return null;
  const key = keyOf(lanePath, base);
  const before = kept.get(key);
  if (before) dropDeliveryTree(before);
  kept.delete(key);
  const built: DeliveryTree = {
    base,
    paths: '',
    stamps: '',
    trusted: false,
    tree: '',
    index: join(gitDir, exitIndexName()),
    gitDir,
    scratch: null,
  };
  try {
    const env = { GIT_INDEX_FILE: built.index };
    rmSync(built.index, { force: true });
    // (a copy of the lane's index keeps the stat data of every file that did not change)
    copyIndex(join(gitDir, 'index'), built.index);
    await git(lanePath, ['add', '-A'], { env });
    built.tree = await gitLine(lanePath, ['write-tree'], { env });
    const baseTree = (await sessions.objects.commit(base))?.tree;
    if (!baseTree) throw new Error(`base ${base} not found`);
    const changes = await treeChanges(sessions.objects, baseTree, built.tree);
    const paths = [...changes.keys()].sort();
    const present = paths.filter((p) => changes.get(p) !== '0 deleted');
    const stamps = indexStamps(built.index, base.length / 2, new Set(present)) ?? new Map<string, string>();
    built.paths = paths.join('\0');
    built.stamps = paths
      .map((p) => (changes.get(p) === '0 deleted' ? '-' : (stamps.get(p) ?? '?')))
      .join('\0');
    // (a submodule's stat data says nothing of the commit it is at: never trusted)
    built.trusted = present.every((p) => stamps.has(p) && !changes.get(p)!.startsWith('160000 '));
    if (built.trusted) kept.set(key, built);
    else dropDeliveryTree(built);
    return paths;
  } catch {
    dropDeliveryTree(built);
    return null;
  }
}

/**
 * The lane's exit tree, when it holds exactly `paths` (the delivery's); any other one kept
 * for the lane is dropped.
 */
export function takeExitTree(lanePath: string, base: string, paths: readonly string[]): DeliveryTree | null {
  let taken: DeliveryTree | null = null;
  for (const [key, built] of kept) {
    if (!key.startsWith(`${lanePath}\0`)) continue;
    kept.delete(key);
    if (built.base === base && built.paths === paths.join('\0')) taken = built;
    else dropDeliveryTree(built);
  }
  return taken;
}
