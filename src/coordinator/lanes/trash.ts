import { join } from 'node:path';
import { crashPoint } from '../../process/crash-points.js';
import { lanesToTrash } from '../../core/ways-out/drop.js';
import type { CoordinatorStorePort } from '../../core/ports/store-port.js';
import type { WorktreePort } from '../../core/ports/worktree-port.js';
import type { ChildRecord } from '../../core/records/record.js';

// The worktrees of dropped children (docs/DECISIONS.md, "No dead ends"): their work is
// first committed onto their own lane branch (nothing is lost when the folder goes), then
// the worktree is moved — by git, so it stays a worktree one can open — to
// <state dir>/trash/<batch>/<child>. Repeatable: a lane already moved is not there any more.

export interface Trashed {
  task_id: string;
  from: string;
  to: string;
  branch_tip: string;
}

export async function trashDroppedLanes(
  worktrees: WorktreePort,
  /** The batch's trash folder (CoordinatorStorePort.trashDir). */
  trash: string,
  record: { readonly children: readonly ChildRecord[] },
  /** Children whose executor still runs: left for a later call. */
  busy: (taskId: string) => boolean = () => false,
): Promise<Trashed[]> {
  const wt = worktrees;
  // (a lane on a machine stays there until its batch ends: then its work is brought home)
  const remote = new Set(
    record.children.filter((c) => c.machine && c.machine !== 'local').map((c) => c.task_id),
  );
  const candidates = lanesToTrash(record).filter((l) => !busy(l.task_id) && !remote.has(l.task_id));
  const there = await Promise.all(candidates.map((l) => wt.exists(l.path)));
  const wanted = candidates.filter((_, i) => there[i]);
  if (wanted.length === 0) return [];
  const trees = await wt.list(); // (one listing for every lane: `git worktree list` waits its turn)
  const done: Trashed[] = [];
  for (const lane of wanted) {
    const tree = await wt.at(lane.path, trees);
    if (!tree || tree.branch !== lane.branch) continue; // not our worktree (any more): left alone
    const tip = await wt.keepWork(lane.path, lane.branch, lane.base_head);
    crashPoint('after-lane-kept', lane.task_id);
    let to = join(trash, lane.task_id);
    for (let n = 2; await wt.exists(to); n++) to = join(trash, `${lane.task_id}.${n}`);
    await wt.move(lane.path, to);
    done.push({ task_id: lane.task_id, from: lane.path, to, branch_tip: tip });
  }
  return done;
}

/** trashDroppedLanes into the store's trash folder, each lane journaled `lane-trashed`. */
export async function trashAndJournal(
  worktrees: WorktreePort,
  store: Pick<CoordinatorStorePort, 'trashDir' | 'journal'>,
  record: { readonly children: readonly ChildRecord[] },
  busy?: (taskId: string) => boolean,
): Promise<Trashed[]> {
  const trashed = await trashDroppedLanes(worktrees, store.trashDir(), record, busy);
  for (const t of trashed)
    store.journal('lane-trashed', { task: t.task_id, from: t.from, to: t.to, branch_tip: t.branch_tip });
  return trashed;
}
