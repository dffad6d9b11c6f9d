import type { BatchRecord } from '../records/record.js';
import { SETTLED_FOR_BATCH } from '../records/record.js';

// `lanes clean` (docs/DECISIONS.md "Cleaning up"): which of a batch's lanes may go without
// losing work. A lane whose work is integrated (or dropped by the user) goes; any other
// lane with work in it — changes in its worktree, or commits on its branch that the batch
// branch lacks — is named, and goes only with --force (to the trash first). The work of a
// dropped child (drop and cancel said it is kept) is kept without --force: its branch tip
// under refs/lanes-trash/, its folder in the trash.

export interface LaneFacts {
  /** The child the lane belongs to (from its branch `lane/<batch>/<child>` or the record). */
  taskId: string;
  worktree: string | null;
  /** The worktree has changes (false when there is none). */
  dirty: boolean;
  /** The branch has commits the batch branch does not contain. */
  unmergedCommits: boolean;
  /** The lane commit an eviction took off the batch branch is kept under a ref. */
  evictedCommit?: boolean;
}

export interface CleanPlan {
  /** Lanes whose removal would lose work, with why: refused without --force. */
  atRisk: { taskId: string; why: string }[];
  /** Lanes of dropped children with work that is not integrated: kept, not refused. */
  kept: { taskId: string; why: string }[];
}

/** Work the record says is safe to throw away: integrated, or dropped by the user. */
function settledWork(record: BatchRecord, taskId: string): boolean {
  const state = record.children.find((c) => c.task_id === taskId)?.state;
  return state !== undefined && SETTLED_FOR_BATCH.has(state);
}

function dropped(record: BatchRecord, taskId: string): boolean {
  return record.children.find((c) => c.task_id === taskId)?.state === 'dropped';
}

export function planClean(record: BatchRecord, lanes: readonly LaneFacts[]): CleanPlan {
  const atRisk: CleanPlan['atRisk'] = [];
  const kept: CleanPlan['kept'] = [];
  for (const lane of lanes) {
    const work = lane.unmergedCommits
      ? 'commits on its lane branch that are not integrated'
      : lane.evictedCommit
        ? 'its lane commit, taken off the batch branch by an eviction'
        : null;
    if (lane.dirty) atRisk.push({ taskId: lane.taskId, why: `changes in ${lane.worktree}` });
    else if (work === null) continue;
    else if (dropped(record, lane.taskId)) kept.push({ taskId: lane.taskId, why: work });
    else if (!settledWork(record, lane.taskId)) atRisk.push({ taskId: lane.taskId, why: work });
  }
  return { atRisk, kept };
}

export function describeRefusal(batchId: string, plan: CleanPlan): string {
  const lines = plan.atRisk.map((r) => `  ${r.taskId}: ${r.why}`).join('\n');
  return `lanes clean: batch ${batchId} has work that is not integrated; nothing was removed (--force moves it to the trash and cleans anyway):\n${lines}`;
}
