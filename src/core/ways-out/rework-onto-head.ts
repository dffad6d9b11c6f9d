import type { KernelRecord } from '../records/kernel.js';
import { expectedHead } from '../steps/lineage.js';
import type { BatchRecord, ChildRecord } from '../records/record.js';
import type { TickContext } from '../steps/tick-context.js';
import { unskip } from '../records/transitions.js';

// Rework onto the new head (docs/DECISIONS.md, "No dead ends"). A parked child whose lane
// commit did not integrate — it conflicts with the batch head, or the merged tree failed
// its checks — is not merged again as it is (that would park it again, for ever). On
// resume, lanes applies the lane's own change (its work against its lane base) three-way
// onto the current batch head, in the lane (the git side is GitPort.reworkLane), and the
// lane's base becomes that head — a sibling its old base held and the head lacks stays out:
// - clean: the child is enrolled again and its QA runs on the merged work; its delivery
//   commit is then made on the new base and integrates as usual;
// - conflicts: the markers are left in the lane's files, the child stays parked
//   `lane_conflict: <paths>`; once they are resolved (by the human in the lane, or by the
//   executor's next attempt, whose prompt says so) QA runs as usual.

export const LANE_CONFLICT = 'lane_conflict';

export function laneConflictReason(paths: readonly string[]): string {
  return `${LANE_CONFLICT}: ${paths.join(', ')}`;
}

/** The paths a `lane_conflict: a, b` reason names, or null for any other reason. */
export function conflictPathsOf(reason: string | null): string[] | null {
  if (!reason?.startsWith(`${LANE_CONFLICT}: `)) return null;
  return reason
    .slice(LANE_CONFLICT.length + 2)
    .split(', ')
    .map((p) => p.trim())
    .filter(Boolean);
}

/** The record after the lane was brought onto `head`: enrolled again, or parked lane_conflict. */
export function reworkedRecord(
  record: BatchRecord,
  taskId: string,
  head: string,
  conflicts: readonly string[],
): BatchRecord {
  const children = record.children.map((c): ChildRecord => {
    if (c.task_id !== taskId) return c;
    if (c.state !== 'needs_human' || !c.lane?.run_id)
      throw new Error(`rework: child ${taskId} is ${c.state}, not a parked lane`);
    const lane = { ...c.lane, base_head: head, lane_commit: null };
    return conflicts.length > 0
      ? { ...c, lane, qa_failures: 0, reason: laneConflictReason(conflicts) }
      : { ...c, lane, qa_failures: 0, state: 'enrolled', reason: null };
  });
  // Enrolled again: its dependents are no longer skipped.
  return conflicts.length > 0 ? { ...record, children } : unskip({ ...record, children });
}

/** The lane kernel after the rework: QA again (clean), or a rework attempt that resolves the conflict. */
export function reworkedKernel(
  k: KernelRecord,
  head: string,
  conflicts: readonly string[],
  now: string,
): KernelRecord {
  const base = {
    ...k,
    base_head: head,
    lifecycle: 'active' as const,
    qa_counted_from: k.qa_runs.length,
    // The merged change is not the one a reviewer approved.
    review: { ...k.review, verdict: null, at: null },
    updated_at: now,
  };
  if (conflicts.length === 0) return { ...base, next_obligation: 'run_qa', rework_feedback: null };
  return {
    ...base,
    next_obligation: 'implement',
    rework_feedback: [
      `lanes merged the current batch head (${head}) into this lane, and these files conflict:`,
      ...conflicts.map((p) => `  ${p}`),
      'Resolve the conflict markers (<<<<<<<, =======, >>>>>>>) so that both changes are kept, then finish the task.',
    ].join('\n'),
  };
}

/** Carries the rework out for one parked child with a lane commit; persists kernel, then record. */
export async function reworkOntoHead(ctx: TickContext, taskId: string): Promise<'enrolled' | 'conflict'> {
  const child = ctx.child(taskId);
  const lane = child.lane!;
  const head = expectedHead(ctx.record);
  const outcome = await ctx.ports.git.reworkLane(lane.path, lane.branch, head, {
    batch: ctx.record.batch_id,
    task: taskId,
    base: lane.base_head,
  });
  ctx.ports.crashPoint('after-lane-rework', taskId);
  const kernel = ctx.ports.store.readKernel(taskId);
  if (kernel.kind === 'ok')
    ctx.ports.store.writeKernel(reworkedKernel(kernel.record, head, outcome.conflicts, ctx.now()));
  ctx.save(reworkedRecord(ctx.record, taskId, head, outcome.conflicts));
  ctx.journal('lane-reworked', {
    task: taskId,
    onto: head,
    lane_tip: outcome.commit,
    previous_lane_commit: lane.lane_commit,
    conflicts: outcome.conflicts,
  });
  return outcome.conflicts.length > 0 ? 'conflict' : 'enrolled';
}
