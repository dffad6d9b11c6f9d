import { journalQa, laneFactsOf, qaInLane } from './attempt-end.js';
import { failedQaCount, newKernelRecord } from '../records/kernel.js';
import type { KernelRecord } from '../records/kernel.js';
import { tokensOf } from '../records/usage.js';
import type { TickContext } from './tick-context.js';
import { enroll, recordQaFailure, settle } from '../records/transitions.js';
import type { BatchRecord, ChildRecord } from '../records/record.js';

// Tick step 4: look at every admitted or enrolled lane through its kernel record and
// move the child by what the kernel and git say (never by what the executor claims).

export const QA_LIMIT_REASON = 'QA failure limit reached';

export async function observeLanes(ctx: TickContext): Promise<void> {
  for (const child of ctx.record.children) {
    if (child.state === 'lane_admitted' && !ctx.away(child)) enrollAdmitted(ctx, child.task_id);
  }
  countTokens(ctx);
  await runDueQa(ctx);
  for (const child of ctx.record.children) {
    if (child.state === 'enrolled' && !ctx.ending.has(child.task_id) && !ctx.away(child))
      await observeEnrolled(ctx, ctx.child(child.task_id));
  }
}

/** The tokens the agents reported spent, summed over the kernels into the record (budget.max_tokens). */
function countTokens(ctx: TickContext): void {
  let spent = 0;
  for (const child of ctx.record.children) {
    // Only a child that had a lane has a kernel (a released lane's kernel stays); the rest
    // are not looked up: an idle tick reads nothing per pending child (bench tick_scaling).
    if (child.lane === null) continue;
    const read = ctx.ports.store.readKernel(child.task_id);
    if (read.kind === 'ok') for (const a of read.record.attempts) if (a.usage) spent += tokensOf(a.usage);
  }
  if (spent !== (ctx.record.tokens_spent ?? 0)) ctx.save({ ...ctx.record, tokens_spent: spent });
}

/**
 * QA for every lane whose executor has ended, all lanes at once: each runs its checks in
 * its own worktree and writes only its own kernel record. The record moves afterwards,
 * one child at a time, in observeEnrolled.
 */
async function runDueQa(ctx: TickContext): Promise<void> {
  const due: Promise<KernelRecord>[] = [];
  for (const child of ctx.record.children) {
    if (child.state !== 'enrolled' || ctx.ending.has(child.task_id) || ctx.away(child)) continue;
    const read = ctx.ports.store.readKernel(child.task_id);
    if (
      read.kind !== 'ok' ||
      read.record.run_id !== child.lane!.run_id ||
      read.record.next_obligation !== 'run_qa'
    )
      continue;
    const look = await ctx.ports.git.lookAtLane(child.lane!.path);
    if (look.present && look.branch === child.lane!.branch) due.push(runQa(ctx, child, read.record));
  }
  await Promise.all(due);
}

/**
 * Enrolls an admitted child: a new kernel record with a new run id (or the one a crash
 * left). `admitted`: the record with the child just admitted, not persisted yet (it is
 * persisted enrolled), and its journal entry, made once it is.
 */
export function enrollAdmitted(
  ctx: TickContext,
  taskId: string,
  admitted?: { record: BatchRecord; journal: () => void },
): void {
  const record = admitted?.record ?? ctx.record;
  const lane = record.children.find((c) => c.task_id === taskId)!.lane!;
  const existing = ctx.ports.store.readKernel(taskId);
  let runId: string;
  if (
    existing.kind === 'ok' &&
    existing.record.lane_path === lane.path &&
    existing.record.base_head === lane.base_head &&
    existing.record.batch_id === record.batch_id &&
    existing.record.attempts.length === 0 &&
    existing.record.qa_runs.length === 0
  ) {
    runId = existing.record.run_id; // written before a crash, never used: adopt it
  } else {
    runId = ctx.ports.newRunId();
    ctx.ports.store.writeKernel(
      newKernelRecord({
        batchId: record.batch_id,
        taskId,
        runId,
        lanePath: lane.path,
        baseHead: lane.base_head,
        reviewRequired: ctx.planChild(taskId).review === 'human',
        now: ctx.now(),
      }),
    );
    ctx.ports.crashPoint('after-kernel-enroll', taskId); // (not again when a crash here is adopted)
  }
  ctx.save(enroll(record, taskId, runId));
  admitted?.journal();
  ctx.journal('enrolled', { task: taskId, run_id: runId });
}

async function observeEnrolled(ctx: TickContext, child: ChildRecord): Promise<void> {
  const taskId = child.task_id;
  const lane = child.lane!;
  const look = await ctx.ports.git.lookAtLane(lane.path);
  if (!look.present || look.branch !== lane.branch) {
    ctx.park(
      taskId,
      `batch_lane_lost: ${lane.path} is ${look.present ? `on ${look.branch ?? 'a detached HEAD'}` : 'gone'}`,
    );
    return;
  }
  const read = ctx.ports.store.readKernel(taskId);
  if (read.kind !== 'ok') {
    ctx.park(
      taskId,
      `batch_lane_lost: kernel record ${read.kind === 'missing' ? 'is missing' : `is unreadable (${read.why})`}`,
    );
    return;
  }
  let kernel: KernelRecord = read.record;
  if (kernel.run_id !== lane.run_id) {
    ctx.park(
      taskId,
      `batch_lane_run_mismatch: recorded run ${lane.run_id}, lane kernel has ${kernel.run_id}`,
    );
    return;
  }
  if (kernel.next_obligation === 'run_qa') kernel = await runQa(ctx, child, kernel);
  if (kernel.lifecycle === 'done') {
    ctx.save(settle(ctx.record, taskId));
    ctx.journal('settled', { task: taskId });
    return;
  }
  const limit = ctx.record.budget.qa_failure_limit;
  const failures = Math.min(failedQaCount(kernel), limit);
  while (ctx.child(taskId).qa_failures < failures) ctx.record = recordQaFailure(ctx.record, taskId);
  if (failures !== child.qa_failures) ctx.save(ctx.record);
  if (failures >= limit) ctx.park(taskId, QA_LIMIT_REASON);
}

async function runQa(ctx: TickContext, child: ChildRecord, kernel: KernelRecord): Promise<KernelRecord> {
  const qa = await qaInLane(
    ctx.ports,
    laneFactsOf(ctx.record.batch_id, child),
    ctx.planChild(child.task_id),
    kernel,
  );
  ctx.qaChangedPaths.set(child.task_id, qa.changed);
  ctx.ports.store.writeKernel(qa.kernel);
  journalQa(ctx.ports.store, child.task_id, qa.kernel);
  return qa.kernel;
}
