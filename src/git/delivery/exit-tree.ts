import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { changeTimesAlwaysMove } from '../../process/change-times.js';
import { dropDeliveryTree } from './delivery.js';
import type { DeliveryTree } from './delivery.js';
import { indexStamps } from '../worktree/index-entries.js';
import { addAndWriteTree, copyIndex } from '../worktree/private-index.js';
import type { RepoSessions } from '../runner/repo-sessions.js';
import { treeChanges } from '../worktree/tree-diff.js';
import { linkedGitDir } from '../worktree/worktree-files.js';

// What a lane changed when its executor exited, read as the tree of the whole lane: its
// index copied into a private one, `git add -A` there and `write-tree` (DESIGN §7, "An exit
// is ended beside the loop"). The changed paths are that tree's changes against the base, read
// through the object reader; they are what `git status` would list, committed or not,
// staged or not, new files included, ignored ones not. When all of them are the delivery's
// (all inside the scope), the tree is the delivery's tree as well, and the commit takes it
// (RepoGit.stageDelivery) while no file of it changed since: git recorded each file's stat
// data in the private index when it read it, and the commit compares it with the file's.
// That proves a file unchanged only where every change moves the change time
// (process/change-times.ts); anywhere else the caller reads a status, as before.

/**
 * Each exit tree's private index, in the lane's git directory: a file of its own, so that
 * dropping an older tree of the lane never removes a newer one's index.
 */
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
  dropExitTrees(lanePath);
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
    // (a copy of the lane's index keeps the stat data of every file that did not change)
    copyIndex(join(gitDir, 'index'), built.index);
    built.tree = await addAndWriteTree(lanePath, built.index, 'all', {
      sessions,
      oidBytes: base.length / 2,
    });
    const baseTree = (await sessions.objects.commit(base))?.tree;
    if (!baseTree) throw new Error(`base ${base} not found`);
    const changes = await treeChanges(sessions.objects, baseTree, built.tree);
    const paths = [...changes.keys()].sort();
    const present = paths.filter((p) => changes.get(p) !== '0 deleted');
    const stamps = indexStamps(built.index, base.length / 2, new Set(present));
    // (a submodule's stat data says nothing of the commit it is at: never trusted)
    built.trusted =
      stamps !== null && present.every((p) => stamps.has(p) && !changes.get(p)!.startsWith('160000 '));
    if (!built.trusted) {
      dropDeliveryTree(built);
      return paths;
    }
    built.paths = paths.join('\0');
    built.stamps = paths.map((p) => stamps!.get(p) ?? '-').join('\0');
    kept.set(keyOf(lanePath, base), built);
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
  const key = keyOf(lanePath, base);
  const built = kept.get(key);
  kept.delete(key);
  dropExitTrees(lanePath);
  if (built && built.paths === paths.join('\0')) return built;
  if (built) dropDeliveryTree(built);
  return null;
}

/** Drops every exit tree kept for the lane (a new exit, its delivery staged, the lane removed). */
export function dropExitTrees(lanePath: string): void {
  for (const [key, built] of kept)
    if (key.startsWith(`${lanePath}\0`)) {
      kept.delete(key);
      dropDeliveryTree(built);
    }
}
