import { deliverLane, laneBranchMoved, laneFactsOf } from './attempt-end.js';
import { checkFailed } from '../records/kernel.js';
import { expectedHead } from './lineage.js';
import type { TickContext } from './tick-context.js';
import { commitLane, integrate } from '../records/transitions.js';
import type { PlanChild } from '../plan/plan.js';
import type { ChildRecord } from '../records/record.js';

// Tick steps 1 and 5: the delivery commit on a lane branch, integration into the batch
// branch, and the adoption of either one when a crash came between the git change and
// the record write. Every git change is looked up before it is made again.

/** Step 1: integration commits on the batch branch that the record does not list yet. */
export async function adoptIntegrations(ctx: TickContext): Promise<void> {
  const tip = await ctx.ports.git.branchTip(ctx.record.branch);
  let head = expectedHead(ctx.record);
  if (!tip || tip === head || !(await ctx.ports.git.isAncestor(head, tip))) return;
  for (const commit of await ctx.ports.git.commitsBetween(head, tip)) {
    if (commit.parents[0] !== head || commit.trailers['Lanes-Batch'] !== ctx.record.batch_id) return;
    const child = ctx.record.children.find(
      (c) =>
        c.state === 'lane_committed' &&
        c.task_id === commit.trailers['Lanes-Task'] &&
        c.lane?.lane_commit === commit.trailers['Lanes-Lane-Commit'],
    );
    if (!child) return; // not ours to adopt: lineage decides what it is
    ctx.save(integrate(ctx.record, child.task_id, commit.sha));
    ctx.journal('integrated', { task: child.task_id, commit: commit.sha, adopted: true });
    head = commit.sha;
  }
}

/** Step 5a: commit each settled child's delivery on its lane branch. */
export async function commitSettled(ctx: TickContext): Promise<void> {
  const states = new Map(ctx.record.children.map((c) => [c.task_id, c.state]));
  const settled = ctx.plan.children.filter(
    (planned) => states.get(planned.id) === 'settled' && !ctx.away(ctx.child(planned.id)),
  );
  // The git work of each lane touches only its own worktree and branch, so the lanes are
  // committed side by side; the record then moves one child at a time, in plan order. A
  // crash in between leaves delivery commits the record does not know: the next tick
  // finds them by their trailers (findDelivery) instead of committing again.
  const made = await Promise.allSettled(settled.map((planned) => deliveryOf(ctx, planned)));
  made.forEach((result, i) => {
    const taskId = settled[i]!.id;
    if (result.status === 'rejected') {
      const moved = laneBranchMoved(result.reason);
      if (moved) ctx.park(taskId, `${moved}; ${wayOnAfterMove(ctx.child(taskId))}`);
      return;
    }
    if (result.value === null) {
      ctx.park(taskId, 'empty delivery: the lane has no change inside its scope any more');
      return;
    }
    ctx.save(commitLane(ctx.record, taskId, result.value));
    ctx.journal('lane-committed', { task: taskId, lane_commit: result.value });
  });
  const failed = made.find(
    (result): result is PromiseRejectedResult =>
      result.status === 'rejected' && !laneBranchMoved(result.reason),
  );
  if (failed) throw failed.reason;
}

function wayOnAfterMove(child: ChildRecord): string {
  const lane = child.lane!;
  return (
    `the lane's files are still in ${lane.path}: put the branch back (git branch -f ${lane.branch} ${lane.base_head.slice(0, 12)}) ` +
    `and lanes resume --approve, or lanes drop the child`
  );
}

/** The delivery commit of one settled child (made now, or found from before a crash); null when empty. */
function deliveryOf(ctx: TickContext, planned: PlanChild): Promise<string | null> {
  const child = ctx.child(planned.id);
  return deliverLane(
    ctx.ports,
    laneFactsOf(ctx.record.batch_id, child),
    planned,
    ctx.qaChangedPaths.get(child.task_id),
  );
}

/** The trailer an integration commit names its lane commit by (adoptIntegrations reads it). */
export function laneCommitTrailer(laneCommit: string): string {
  return `Lanes-Lane-Commit: ${laneCommit}\n`;
}

/** Step 5b: integrate each lane commit into the batch branch, one at a time, in plan order. */
export async function integrateCommitted(ctx: TickContext): Promise<void> {
  // (no child becomes lane_committed during this step: the ones that are now are the candidates)
  const committed = new Set(
    ctx.record.children.filter((c) => c.state === 'lane_committed').map((c) => c.task_id),
  );
  let integrated = 0;
  for (const planned of ctx.plan.children) {
    if (!committed.has(planned.id)) continue;
    const child = ctx.child(planned.id);
    if (child.state !== 'lane_committed') continue;
    if (!(await integrateOne(ctx, child))) break; // the branch moved under us: next tick
    if (ctx.child(planned.id).state === 'integrated') integrated++;
  }
  // (the lanes waiting for a slot can move to the new head while the tick goes on)
  if (integrated > 0 && ctx.coordinated) ctx.moveHead({ head: expectedHead(ctx.record), integrated });
}

async function integrateOne(ctx: TickContext, child: ChildRecord): Promise<boolean> {
  const git = ctx.ports.git;
  const lane = child.lane!;
  const laneCommit = lane.lane_commit!;
  const head = expectedHead(ctx.record);
  const merged = await git.mergeTree(head, laneCommit);
  if ('conflicts' in merged) {
    ctx.journal('integration-conflict', { task: child.task_id, paths: merged.conflicts });
    ctx.park(child.task_id, `batch_integration_conflict: ${merged.conflicts.join(', ')}`);
    return true;
  }
  const candidate = await git.integrationCommit(merged.tree, head, laneCommit, laneCommitTrailer(laneCommit));
  const reverify =
    ctx.ports.integrationChecks === 'all' ||
    !(merged.laneChangeOnly || (await git.sameChange(lane.base_head, laneCommit, head, merged.tree)));
  if (reverify) {
    ctx.persist(); // (the checks can take minutes: what is integrated so far is on disk meanwhile)
    const failing = await verifyCandidate(ctx, child, candidate, head);
    if (failing.length > 0) {
      // (parked and written at once: minutes of checks are not run again after a crash)
      const logs = ctx.ports.store.integrationLogPath(child.task_id, candidate, '*');
      ctx.park(child.task_id, `batch_integration_check_failed: ${failing.join(', ')} (output: ${logs})`);
      ctx.persist();
      return true;
    }
  }
  if (!(await git.advanceBranch(ctx.record.branch, candidate, head))) return false;
  ctx.ports.crashPoint('after-update-ref', child.task_id);
  ctx.save(integrate(ctx.record, child.task_id, candidate));
  ctx.journal('integrated', { task: child.task_id, commit: candidate, reverified: reverify });
  return true;
}

/**
 * Runs, in a scratch checkout of the candidate, the acceptance checks of this child and
 * of every sibling integrated since this lane's base. Returns the failing "<task>:<check>" ids.
 */
async function verifyCandidate(
  ctx: TickContext,
  child: ChildRecord,
  candidate: string,
  head: string,
): Promise<string[]> {
  const git = ctx.ports.git;
  const since = new Set((await git.commitsBetween(child.lane!.base_head, head)).map((c) => c.sha));
  const tasks = [
    child.task_id,
    ...ctx.record.children.filter((c) => c.commit !== null && since.has(c.commit)).map((c) => c.task_id),
  ];
  const logPath = (name: string) => ctx.ports.store.integrationLogPath(child.task_id, candidate, name);
  return git.withScratchCheckout(candidate, ctx.ports.store.scratchDir(), async (dir) => {
    const failing: string[] = [];
    // The checkout gets what a lane gets (copy_files, setup) before any check runs in it.
    const notReady = (await ctx.ports.qa.prepare?.(dir, logPath)) ?? null;
    if (notReady) {
      ctx.journal('qa-failed', { task: child.task_id, integration_check: true, setup: notReady });
      return ['setup'];
    }
    for (const task of tasks) {
      const checks = ctx.planChild(task).acceptance;
      const results = await ctx.ports.qa.runChecks(dir, checks, (check) => logPath(`${task}-${check.id}`));
      for (const r of results) if (checkFailed(r)) failing.push(`${task}:${r.id}`);
    }
    ctx.journal(failing.length ? 'qa-failed' : 'qa-passed', {
      task: child.task_id,
      integration_check: true,
      tasks,
      failing,
    });
    return failing;
  });
}
