import { badInput } from '../basics/errors.js';
import { reopenForQa } from '../records/kernel.js';
import { planDigest } from '../plan/plan.js';
import type { Plan } from '../plan/plan.js';
import type { TickContext } from '../steps/tick-context.js';
import { expectedHead } from '../steps/lineage.js';
import { unpark, unskip } from '../records/transitions.js';
import { withLimits } from './reopen.js';
import type { NewLimits } from './reopen.js';
import { conflictPathsOf, reworkOntoHead } from './rework-onto-head.js';
import { applyMoves, checkMovesIn } from './move.js';
import type { MoveRequest } from './move.js';

// Resuming parked work (DESIGN §4): only with a fresh confirmation, strictly later than the
// recorded one. Each parked child is re-read from its lane; what checks out goes back to
// where its facts say it is, the rest stays parked with a reason.

export interface Approval extends NewLimits {
  confirmationTime: string;
  replan?: Plan;
  /** Resume only these parked children (the TUI's retry of one child); all when absent. */
  only?: string[];
  /** `--move <child>=<machine>`: these parked children start again from their base there. */
  moves?: MoveRequest[];
}

export function topologyOf(plan: Plan): string {
  return JSON.stringify(plan.children.map((c) => [c.id, [...c.blocked_by].sort()]));
}

/** Checks a new plan against the confirmed one: same ids and blocked_by, or exit 2. */
export function checkReplan(current: Plan, next: Plan): void {
  if (next.batch !== current.batch)
    throw badInput('plan_invalid', `--replan: the plan is for batch "${next.batch}", not "${current.batch}"`);
  if (topologyOf(next) !== topologyOf(current))
    throw badInput(
      'plan_invalid',
      '--replan: the new plan changes the children or their blocked_by; only goals, scopes, acceptance and prompts may change on resume',
    );
}

export async function applyApproval(ctx: TickContext, approval: Approval): Promise<void> {
  if (!(Date.parse(approval.confirmationTime) > Date.parse(ctx.record.confirmation_time)))
    throw badInput(
      'usage',
      `resume needs a fresh confirmation: ${approval.confirmationTime} is not later than the recorded ${ctx.record.confirmation_time}`,
    );
  let record = withLimits({ ...ctx.record, confirmation_time: approval.confirmationTime }, approval);
  // (checked before anything is written: a move that cannot be made changes nothing)
  checkMovesIn(ctx, approval.moves ?? []);
  if (approval.replan) {
    checkReplan(ctx.plan, approval.replan);
    ctx.ports.store.writePlan(approval.replan);
    record = { ...record, plan_digest: planDigest(approval.replan) };
    ctx.journal('replanned', { plan_digest: record.plan_digest });
  }
  ctx.save(record);
  applyMoves(ctx, approval.moves ?? []);
  const stillParked: string[] = [];
  for (const child of ctx.record.children) {
    if (child.state !== 'needs_human') continue;
    if (approval.only && !approval.only.includes(child.task_id)) continue;
    const lane = child.lane;
    if (lane !== null && ctx.away(child)) {
      // (its machine does not answer: it is resumed once it is back, or moved, or dropped)
      stillParked.push(child.task_id);
      continue;
    }
    if (lane === null || lane.run_id === null) {
      ctx.save(unpark(ctx.record, child.task_id, 'pending'));
      continue;
    }
    const look = await ctx.ports.git.lookAtLane(lane.path);
    const kernel = ctx.ports.store.readKernel(child.task_id);
    if (!look.present || look.branch !== lane.branch) {
      const reason = `batch_lane_lost: ${lane.path} is not on ${lane.branch}`;
      stillParked.push(child.task_id);
      ctx.park(child.task_id, reason);
      continue;
    }
    if (kernel.kind !== 'ok' || kernel.record.run_id !== lane.run_id) {
      stillParked.push(child.task_id);
      ctx.park(
        child.task_id,
        `batch_lane_run_mismatch: the lane's kernel record does not match run ${lane.run_id}`,
      );
      continue;
    }
    const conflicted = conflictPathsOf(child.reason);
    const markers = conflicted ? await ctx.ports.git.conflictMarkers(lane.path, conflicted) : [];
    if (markers.length > 0) {
      stillParked.push(child.task_id); // the lane still holds conflict markers: nothing to look at yet
      ctx.journal('lane-conflict-unresolved', { task: child.task_id, paths: markers });
      continue;
    }
    // A lane base the head no longer holds (the batch was rebuilt without a sibling it ran on).
    const offHead = !(await ctx.ports.git.isAncestor(lane.base_head, expectedHead(ctx.record)));
    if (lane.lane_commit || offHead) {
      // Its lane commit did not integrate (a conflict, failed integration checks), or its
      // base is gone from the batch: the lane's own change is brought onto the current batch
      // head first, and looked at again.
      if ((await reworkOntoHead(ctx, child.task_id)) === 'conflict') stillParked.push(child.task_id);
    } else if (kernel.record.lifecycle === 'done') {
      ctx.save(unpark(ctx.record, child.task_id, 'settled'));
    } else {
      // The human may have fixed the lane by hand: QA looks at it again before any relaunch.
      ctx.ports.store.writeKernel(reopenForQa(kernel.record, ctx.now()));
      ctx.save(unpark(ctx.record, child.task_id, 'enrolled'));
    }
  }
  const running = { ...unskip(ctx.record), batch_state: 'running' as const };
  ctx.save(running);
  ctx.journal('resumed', { confirmation_time: approval.confirmationTime, still_parked: stillParked });
}
