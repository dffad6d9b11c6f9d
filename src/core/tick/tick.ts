import { journalExit } from '../steps/attempt-end.js';
import { admitOffers } from '../steps/admission.js';
import { adoptIntegrations, commitSettled, integrateCommitted } from '../steps/deliver.js';
import { LanesError } from '../basics/errors.js';
import { applyReview, recordExit } from '../records/kernel.js';
import { classifyLineage } from '../steps/lineage.js';
import { observeLanes } from '../steps/observe.js';
import type { TickPorts } from '../ports/tick-ports.js';
import { IN_FLIGHT_STATES } from '../records/record.js';
import type { Report } from '../records/report.js';
import { isTerminal } from '../records/report.js';
import { settleAndReport } from './report-builder.js';
import { applyApproval } from '../ways-out/resume.js';
import { verifyBatch } from '../whole-batch/final-verification.js';
import { TickContext } from '../steps/tick-context.js';
import { recordTurnEnd } from '../turns/turn.js';
import { adoptHead, holdForeignHead, release, setBatchState } from '../records/transitions.js';
import { foreignHeadAdvice } from '../ways-out/next-steps.js';
import { applyCancel, applyDrops } from '../ways-out/ways-out.js';
import { recordSessionId } from '../turns/turn.js';
import { withEffects } from './effects.js';
import { machinePool, parkLostLanes } from '../steps/machine-lanes.js';
import type { TickInput } from './tick-input.js';

export type {
  ExitNotice,
  InFlight,
  ReviewVerdict,
  TickInput,
  TurnEndNotice,
  WaitingTurn,
} from './tick-input.js';

// The core runner (DESIGN §4): one tick, in the spec's order. Every step persists before
// the next, and every step is safe to repeat after a crash: git is looked up before it is
// changed, and the record only ever moves to what git and the kernel show. Events come in
// (tick-input.ts), effects go out as the report's handoffs (effects.ts): the tick calls
// nobody, but for TickPorts.early, which only hands an effect out sooner.

export async function tick(ports: TickPorts, input: TickInput = {}): Promise<Report> {
  ports.git.refresh?.();
  const ctx = new TickContext(ports, ports.store.readRecord(), ports.store.readPlan());
  try {
    return await runTick(ctx, input);
  } catch (error) {
    try {
      ctx.persist(); // what the failing step did before it failed stays, as each change always did
    } catch {
      // (the tick's own error is the one to tell)
    }
    throw error;
  }
}

async function runTick(ctx: TickContext, input: TickInput): Promise<Report> {
  const ports = ctx.ports;
  ctx.releasing = new Set(input.releasing ?? []);
  ctx.releaseChecksClean = input.releaseChecksClean ?? false;
  ctx.keptChanged = new Set(input.keptChanged ?? []);
  ctx.ending = new Set(input.ending ?? []);
  ctx.coordinated = input.coordinated ?? false;
  ctx.machines = machinePool(input);
  const checkedOut = await ports.git.worktreesOnBranch(ctx.record.branch);
  if (checkedOut.length > 0)
    throw new LanesError(
      'batch_branch_checked_out',
      `batch_branch_checked_out: ${ctx.record.branch} is checked out in ${checkedOut.join(', ')}; switch that worktree to another branch first`,
      2,
    );

  if (isTerminal(ctx.record.batch_state)) {
    ctx.enter('release');
    if (ctx.record.batch_state === 'completed' || ctx.record.batch_state === 'cancelled')
      await recordReleases(ctx);
    ctx.enter('report');
    return finish(ctx, input, await settleAndReport(ctx, { refusals: [] }));
  }
  if (input.cancel) {
    ctx.enter('cancel');
    applyCancel(ctx, input.cancel.reason);
    ctx.enter('report');
    return finish(ctx, input, await settleAndReport(ctx, { refusals: [] }));
  }
  ctx.enter('drop');
  applyDrops(ctx, input.drops ?? []);
  ctx.enter('approve');
  if (input.approval) await applyApproval(ctx, input.approval);
  if (ctx.record.batch_state === 'needs_human' || ctx.record.batch_state === 'budget_stopped') {
    ctx.enter('release');
    await recordReleases(ctx); // the steward still releases integrated lanes meanwhile
    ctx.enter('report');
    return finish(ctx, input, await settleAndReport(ctx, { refusals: [] }));
  }
  ctx.enter('start');
  if (ctx.record.batch_state === 'prepared') {
    ctx.save(setBatchState(ctx.record, 'running'));
  }
  ctx.enter('notices');
  recordNotices(ctx, input);
  ctx.enter('machines');
  parkLostLanes(ctx);

  ctx.enter('adopt');
  await adoptIntegrations(ctx); // 1
  ctx.enter('release');
  await recordReleases(ctx); // 2
  ctx.enter('lineage');
  const lineage = await classifyLineage(ports.git, ctx.record); // 3
  if (lineage.kind === 'broken') {
    failBatch(ctx, lineage.reason);
    ctx.enter('report');
    return finish(ctx, input, await settleAndReport(ctx, { refusals: [], reason: lineage.reason }));
  }
  if (lineage.kind === 'fast_forward') {
    // Commits lanes did not make are adopted only on a fresh approval (this tick's).
    if (!input.approval) return holdForApproval(ctx, input, lineage.from, lineage.head);
    ctx.save(adoptHead(ctx.record, lineage.from, lineage.head));
    ctx.journal('head-adopted', { from: lineage.from, to: lineage.head });
  }
  ctx.enter('observe');
  await observeLanes(ctx); // 4
  ctx.enter('commit');
  await commitSettled(ctx); // 5
  ctx.enter('integrate');
  await integrateCommitted(ctx);
  ctx.enter('admit');
  const refusals = await admitOffers(ctx, input.offers ?? []); // 6
  ctx.enter('final');
  await verifyBatch(ctx); // every child integrated: the whole batch's checks
  ctx.enter('report');
  return finish(
    ctx,
    input,
    await settleAndReport(ctx, { refusals, dispatchPaused: input.dispatchPaused ?? false }),
  ); // 7
}

/**
 * The batch branch moved forwards by commits lanes did not make while the batch ran (a
 * hand commit, an executor's own): the batch stops for a human, the commits named, and
 * nothing builds on them until a fresh approval adopts them (DESIGN §4 step 3).
 */
async function holdForApproval(
  ctx: TickContext,
  input: TickInput,
  from: string,
  to: string,
): Promise<Report> {
  const commits = (await ctx.ports.git.commitsBetween(from, to)).map((c) => c.sha);
  ctx.save(holdForeignHead(ctx.record, from, to, commits));
  const reason = foreignHeadAdvice(ctx.record)!;
  ctx.journal('batch-stopped', { batch_state: 'needs_human', reason, commits });
  ctx.enter('report');
  return finish(ctx, input, await settleAndReport(ctx, { refusals: [], reason }));
}

/** The report of a batch as it stands, without moving anything (`start --no-run`). */
export async function currentReport(ports: TickPorts): Promise<Report> {
  const ctx = new TickContext(ports, ports.store.readRecord(), ports.store.readPlan());
  return finish(ctx, {}, await settleAndReport(ctx, { refusals: [] }));
}

function finish(ctx: TickContext, input: TickInput, settled: Report): Report {
  const report = withEffects(ctx, settled, input);
  ctx.persist();
  try {
    ctx.ports.store.writeReport(report);
  } catch (error) {
    // A terminal report is immutable: the first one stands, this one is only printed.
    if (!(error instanceof LanesError && error.code === 'report_immutable')) throw error;
  }
  ctx.journal('tick', { batch_state: report.batch_state, handoffs: report.handoffs.length });
  return report;
}

/** Executor exits and review verdicts reported by the parent go to the lanes' kernels first. */
function recordNotices(ctx: TickContext, input: TickInput): void {
  for (const exit of input.exited ?? []) {
    if (exit.recorded) continue; // (step 4 reads what the kernel made of it)
    const child = ctx.record.children.find((c) => c.task_id === exit.task_id);
    if (child?.state !== 'enrolled') continue;
    const read = ctx.ports.store.readKernel(exit.task_id);
    if (read.kind !== 'ok' || read.record.run_id !== child.lane?.run_id) continue; // step 4 parks it
    ctx.ports.store.writeKernel(recordExit(read.record, exit, ctx.now()));
    journalExit(ctx.ports.store, exit.task_id, exit);
  }
  for (const end of input.turnEnds ?? []) {
    const child = ctx.record.children.find((c) => c.task_id === end.task_id);
    if (child?.state !== 'enrolled') continue;
    const read = ctx.ports.store.readKernel(end.task_id);
    if (read.kind !== 'ok' || read.record.run_id !== child.lane?.run_id) continue; // step 4 parks it
    // The one write of the turn end: the session id its message named, then the turn itself
    // (journaled as turn-ended when the hook's message came).
    const named = end.session_id
      ? recordSessionId(read.record, end.attempt, end.session_id, ctx.now())
      : read.record;
    ctx.ports.store.writeKernel(recordTurnEnd(named, ctx.now()));
  }
  for (const failure of input.setupFailures ?? []) {
    if (ctx.record.children.find((c) => c.task_id === failure.task_id)?.state === 'pending')
      ctx.park(failure.task_id, failure.reason);
  }
  for (const review of input.reviews ?? []) {
    const read = ctx.ports.store.readKernel(review.task_id);
    if (read.kind !== 'ok') continue;
    ctx.ports.store.writeKernel(applyReview(read.record, review.verdict, review.note ?? null, ctx.now()));
    ctx.journal(review.verdict === 'approved' ? 'qa-passed' : 'qa-failed', {
      task: review.task_id,
      review: review.verdict,
    });
  }
}

async function recordReleases(ctx: TickContext): Promise<void> {
  for (const child of ctx.record.children) {
    if (child.state !== 'integrated' || ctx.away(child)) continue;
    const look = await ctx.ports.git.lookAtLane(child.lane!.path);
    if (look.present) continue;
    ctx.save(release(ctx.record, child.task_id));
    ctx.journal('released', { task: child.task_id });
  }
}

function failBatch(ctx: TickContext, reason: string): void {
  for (const child of ctx.record.children) {
    if (IN_FLIGHT_STATES.has(child.state)) ctx.park(child.task_id, reason);
  }
  ctx.save(setBatchState(ctx.record, 'failed'));
  ctx.journal('batch-failed', { reason });
}
