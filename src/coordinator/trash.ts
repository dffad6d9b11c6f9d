import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { crashPoint } from '../process/crash-points.js';
import { lanesToTrash } from '../core/drop.js';
import type { BatchRecord } from '../core/record.js';
import { git } from '../git/git.js';
import { keepLaneWork } from '../git/lane-work.js';
import { listWorktrees, realpathOrNull } from '../git/worktrees.js';

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
  repoRoot: string,
  /** The batch's trash folder (CoordinatorStorePort.trashDir). */
  trash: string,
  record: BatchRecord,
  /** Children whose executor still runs: left for a later call. */
  busy: (taskId: string) => boolean = () => false,
): Promise<Trashed[]> {
  const wanted = lanesToTrash(record).filter((l) => !busy(l.task_id) && existsSync(l.path));
  if (wanted.length === 0) return [];
  const worktrees = await listWorktrees(repoRoot);
  const done: Trashed[] = [];
  for (const lane of wanted) {
    const real = realpathOrNull(lane.path);
    const tree = worktrees.find((w) => realpathOrNull(w.path) === real);
    if (!tree || tree.branch !== lane.branch) continue; // not our worktree (any more): left alone
    const tip = await keepLaneWork(lane.path, lane.branch, repoRoot);
    crashPoint('after-lane-kept', lane.task_id);
    let to = join(trash, lane.task_id);
    for (let n = 2; existsSync(to); n++) to = join(trash, `${lane.task_id}.${n}`);
    mkdirSync(dirname(to), { recursive: true });
    await git(repoRoot, ['worktree', 'move', lane.path, to]);
    done.push({ task_id: lane.task_id, from: lane.path, to, branch_tip: tip });
  }
  return done;
}
