import { foreignHeadAdvice } from '../ways-out/next-steps.js';
import type { Handoff, LaneRefusal, MachineStatus, Report } from '../records/report.js';
import { expectedHead } from '../steps/lineage.js';
import { everyChildDone, finalChecksOf } from '../whole-batch/final-verification.js';
import { laneBranch } from '../basics/ids.js';
import { IN_FLIGHT_STATES } from '../records/record.js';
import { describeDropped } from '../ways-out/drop.js';
import { parkedAdvice } from '../ways-out/next-steps.js';
import { budgetSpent, placedChildren, readyChildren, tokensSpent } from '../steps/schedule.js';
import { lanesRunning } from '../machines/machines.js';
import type { MachinePool } from '../machines/machines.js';
import type { TickContext } from '../steps/tick-context.js';
import { setBatchState } from '../records/transitions.js';

// Tick step 7: decide where the batch stands and what the steward and the parent should
// do next. Handoffs are requests built from facts; they never move a child by themselves.

/** The next action of a report while dispatch is paused (`lanes wait` looks for it). */
export const PAUSED_NEXT_ACTION = 'Dispatch is paused; resume it to start new lanes.';

export interface ReportOptions {
  refusals: LaneRefusal[];
  /** Dispatch paused by the coordinator (suspect dispatch, the user's `p`): no provision handoffs. */
  dispatchPaused?: boolean;
  reason?: string | null;
}

export async function settleAndReport(ctx: TickContext, options: ReportOptions): Promise<Report> {
  const record = ctx.record;
  const handoffs: Handoff[] = [];
  let reason = options.reason ?? null;

  // Dropped children left the batch: the rest all integrated is a completed batch. With
  // final checks, verifyBatch completes the batch once they pass; until then (a
  // verification cut short by a moved branch) it is not stopped either.
  const done = everyChildDone(record);
  const finalPending = finalChecksOf(ctx).length > 0 && done;
  if (record.batch_state === 'running' && done && !finalPending) {
    ctx.save(setBatchState(record, 'completed'));
    ctx.journal('batch-completed', { commits: ctx.record.commits.length });
  }

  if (ctx.record.batch_state === 'running') {
    for (const child of ctx.record.children) {
      if (child.state !== 'enrolled') continue;
      const kernel = ctx.ports.store.readKernel(child.task_id);
      handoffs.push({
        action: 'executor',
        task_id: child.task_id,
        run_id: child.lane!.run_id!,
        lane_path: child.lane!.path,
        lane_branch: child.lane!.branch,
        next_obligation: kernel.kind === 'ok' ? kernel.record.next_obligation : 'implement',
      });
    }
  }
  if (
    ctx.record.batch_state === 'running' ||
    ctx.record.batch_state === 'completed' ||
    ctx.record.batch_state === 'needs_human' ||
    ctx.record.batch_state === 'budget_stopped' ||
    ctx.record.batch_state === 'cancelled'
  ) {
    // Every integrated lane is looked at side by side (each look only reads its own lane).
    // Whether it is clean is read only where the release would not find out by itself.
    const integrated = ctx.record.children.filter(
      (c) => c.state === 'integrated' && !ctx.releasing.has(c.task_id) && !ctx.away(c),
    );
    const lookFirst = (task: string) => !ctx.releaseChecksClean || ctx.keptChanged.has(task);
    const looks = await Promise.all(
      integrated.map((c) => ctx.ports.git.lookAtLane(c.lane!.path, { clean: lookFirst(c.task_id) })),
    );
    for (const [i, child] of integrated.entries()) {
      const look = looks[i]!;
      if (look.present && (look.clean || !lookFirst(child.task_id)))
        handoffs.push({
          action: 'release',
          task_id: child.task_id,
          lane_branch: child.lane!.branch,
          lane_path: child.lane!.path,
        });
    }
  }
  if (ctx.record.batch_state === 'running' || ctx.record.batch_state === 'prepared') {
    const startable = options.dispatchPaused ? [] : placedChildren(ctx.record, ctx.plan, ctx.machines);
    for (const { task_id, machine } of startable)
      handoffs.push({
        action: 'provision',
        task_id,
        lane_branch: laneBranch(ctx.record.batch_id, task_id),
        base_head: expectedHead(ctx.record),
        machine,
      });
    const inFlight = ctx.record.children.some((c) => IN_FLIGHT_STATES.has(c.state));
    if (
      ctx.record.batch_state === 'running' &&
      !inFlight &&
      startable.length === 0 &&
      !waitsForMachine(ctx) &&
      !options.dispatchPaused &&
      !finalPending
    ) {
      const parked = ctx.record.children.filter((c) => c.state === 'needs_human');
      const next =
        parked.length > 0 || ctx.record.children.some((c) => c.state === 'skipped_blocked')
          ? 'needs_human'
          : 'budget_stopped';
      ctx.save(setBatchState(ctx.record, next));
      reason =
        next === 'needs_human'
          ? `${parked.map((c) => `${c.task_id}: ${c.reason}`).join('; ')}`
          : budgetWords(ctx.record);
      ctx.journal('batch-stopped', { batch_state: next, reason });
    }
  }
  if (reason === null && ctx.record.batch_state === 'needs_human')
    reason =
      foreignHeadAdvice(ctx.record) ??
      ctx.record.children
        .filter((c) => c.state === 'needs_human')
        .map((c) => `${c.task_id}: ${c.reason}`)
        .join('; ');

  const report: Report = {
    batch_id: ctx.record.batch_id,
    batch_state: ctx.record.batch_state,
    max_parallel: ctx.record.max_parallel,
    children: ctx.record.children,
    commits: ctx.record.commits,
    reason,
    handoffs,
    lane_refusals: options.refusals,
    next_action: nextAction(ctx, handoffs, !!options.dispatchPaused),
    ...(ctx.machines ? { machines: machineStatuses(ctx.record, ctx.machines) } : {}),
    created_at: ctx.now(),
  };
  return report;
}

/**
 * A child could start but for machines that do not answer (reconnecting or lost): the batch
 * waits for them (or for a move), it does not stop as if its budget were spent.
 */
function waitsForMachine(ctx: TickContext): boolean {
  const pool = ctx.machines;
  if (pool === null || pool.unreachable.size + pool.lost.size === 0) return false;
  return readyChildren(ctx.record, ctx.plan).length > 0;
}

/** Each machine of the pool with its slots, the lanes in flight on it and its state. */
function machineStatuses(record: TickContext['record'], pool: MachinePool): MachineStatus[] {
  const running = lanesRunning(record);
  return pool.machines.map((m) => ({
    name: m.name,
    slots: m.slots,
    running: running.get(m.name) ?? 0,
    state: pool.lost.has(m.name) ? 'lost' : pool.unreachable.has(m.name) ? 'reconnecting' : 'ready',
  }));
}

function nextAction(ctx: TickContext, handoffs: Handoff[], paused: boolean): string {
  const r = ctx.record;
  switch (r.batch_state) {
    case 'completed': {
      const dropped = describeDropped(r);
      if (!dropped) return `All ${r.children.length} children are integrated on ${r.branch}.`;
      const n = r.children.filter((c) => c.commit !== null).length;
      return `${n} of ${r.children.length} children are integrated on ${r.branch}; dropped: ${dropped}.`;
    }
    case 'needs_human':
      return parkedAdvice(r);
    case 'budget_stopped':
      if (tokensSpent(r))
        return `The token budget (${r.budget.max_tokens}) is spent (${r.tokens_spent} reported); go on with a larger one: lanes resume ${r.batch_id} --approve --max-tokens <n>`;
      return `The child budget (${r.budget.max_children}) is spent; go on with a larger one: lanes resume ${r.batch_id} --approve --budget ${r.budget.max_children + 1}`;
    case 'failed':
      return `The batch branch ${r.branch} no longer descends from what lanes recorded; every lane is kept for inspection.`;
    case 'rejected':
      return 'The batch was rejected.';
    case 'cancelled': {
      const dropped = describeDropped(r);
      return `The batch was cancelled${dropped ? `; unintegrated work is kept: ${dropped}` : ''}.`;
    }
    default: {
      if (paused) return PAUSED_NEXT_ACTION;
      const counts = new Map<string, number>();
      for (const h of handoffs) counts.set(h.action, (counts.get(h.action) ?? 0) + 1);
      const parts = [...counts].map(([action, n]) => `${n} ${action}`);
      if (budgetSpent(r) && !counts.has('executor')) parts.push('budget spent');
      return parts.length ? `Act on the handoffs: ${parts.join(', ')}.` : 'Wait for the running lanes.';
    }
  }
}

/** Which budget stopped the batch, in words (the journal's and the report's reason). */
function budgetWords(r: TickContext['record']): string {
  if (tokensSpent(r)) return `the token budget (${r.budget.max_tokens}) is spent: ${r.tokens_spent} reported`;
  return `the child budget (${r.budget.max_children}) is spent`;
}
