import { afterProbe, nextStep, startBisect } from './bisect.js';
import { applyEviction, childOfCommit, dependsOnAny, reopenAfterEviction } from './eviction.js';
import type { FinalVerification, Rebuild } from '../records/final-state.js';
import type { CheckRun } from '../records/kernel.js';
import { checkFailed } from '../records/kernel.js';
import { laneCommitTrailer } from '../steps/deliver.js';
import { expectedHead } from '../steps/lineage.js';
import type { AcceptanceCheck } from '../plan/plan.js';
import type { FinalPort } from '../ports/final-port.js';
import type { BatchRecord } from '../records/record.js';
import { SETTLED_FOR_BATCH } from '../records/record.js';
import type { TickContext } from '../steps/tick-context.js';
import { setBatchState } from '../records/transitions.js';

// The whole batch's final verification (docs/DECISIONS.md "Final verification"), a tick step
// after integration: once every child is integrated the final checks run on the batch
// tip; green completes the batch. Red bisects the integration commits for the first red
// one, rebuilds the batch branch without its child and that child's dependents, verifies
// the rebuilt tip once and parks the culprit. Each phase is persisted (the record's
// `final_verification`) before the run or the git change it leads to.

/** Every child integrated (a child the user dropped does not count). */
export function everyChildDone(record: BatchRecord): boolean {
  return record.children.every((c) => SETTLED_FOR_BATCH.has(c.state));
}

/** The plan's final checks, else the config's. */
export function finalChecksOf(ctx: TickContext): readonly AcceptanceCheck[] {
  return ctx.plan.final_checks ?? ctx.ports.finalChecks ?? [];
}

/** The ref that keeps the tip a rebuild replaces until the new tip is recorded. */
export const preRebuildRef = (batch: string) => `refs/lanes/${batch}/pre-rebuild`;
/** Where an evicted dependent's lane commit is kept. */
export const evictedRef = (batch: string, task: string) => `refs/lanes/${batch}/evicted/${task}`;

const failingIds = (runs: CheckRun[]) => runs.filter(checkFailed).map((r) => r.id);
const short = (sha: string) => sha.slice(0, 12);

export async function verifyBatch(ctx: TickContext): Promise<void> {
  if (ctx.record.batch_state !== 'running') return;
  const checks = finalChecksOf(ctx);
  let fv = ctx.record.final_verification;
  if (fv && (fv.phase === 'verify' || fv.phase === 'bisect') && fv.tip !== expectedHead(ctx.record)) {
    // The branch moved on since (an adopted head): what was learnt is about another tip.
    saveFv(ctx, undefined);
    fv = undefined;
  }
  if (!fv) {
    if (checks.length === 0 || !everyChildDone(ctx.record)) return;
    fv = {
      phase: 'verify',
      tip: expectedHead(ctx.record),
      commits: [...ctx.record.commits],
      failing: [],
      good: 0,
      bad: ctx.record.commits.length,
      runs: 0,
      rebuild: null,
    };
    saveFv(ctx, fv);
  }
  const port = ctx.ports.final;
  if (!port) throw new Error('the batch has final checks but no FinalPort was given');
  for (;;) {
    const current: FinalVerification | undefined = ctx.record.final_verification;
    if (!current) return;
    if (current.phase === 'verify') await verifyTip(ctx, port, current, checks);
    else if (current.phase === 'bisect') await bisectStep(ctx, port, current, checks);
    else if (current.phase === 'evict') {
      if (!(await evict(ctx, port, current))) return;
    } else {
      await verifyRebuilt(ctx, port, current, checks);
      return;
    }
    if (ctx.record.batch_state !== 'running') return;
  }
}

function saveFv(ctx: TickContext, fv: FinalVerification | undefined): void {
  const { final_verification: _old, ...rest } = ctx.record;
  ctx.save(fv ? { ...rest, final_verification: fv } : rest);
}

async function run(
  ctx: TickContext,
  port: FinalPort,
  fv: FinalVerification,
  commit: string,
  role: string,
  checks: readonly AcceptanceCheck[],
): Promise<string[]> {
  const label = `${fv.runs + 1}-${role}-${short(commit)}`;
  const results = await port.runChecks(commit, checks, label);
  ctx.ports.crashPoint('after-final-check', label);
  const failing = failingIds(results);
  ctx.journal('final-check', {
    commit,
    role,
    run: fv.runs + 1,
    passed: failing.length === 0,
    failing,
    logs: results.flatMap((r) => (r.log_path ? [r.log_path] : [])),
  });
  return failing;
}

async function verifyTip(
  ctx: TickContext,
  port: FinalPort,
  fv: FinalVerification,
  checks: readonly AcceptanceCheck[],
): Promise<void> {
  const failing = await run(ctx, port, fv, fv.tip, 'tip', checks);
  if (failing.length === 0) {
    saveFv(ctx, undefined);
    ctx.save(setBatchState(ctx.record, 'completed'));
    ctx.journal('batch-completed', { commits: ctx.record.commits.length, final_checks: 'passed' });
    return;
  }
  if (fv.commits.length === 0) {
    // Nothing of the batch's own is on the branch: the base itself is red.
    saveFv(ctx, undefined);
    ctx.save(setBatchState(ctx.record, 'failed'));
    ctx.journal('batch-failed', { reason: `final checks fail on the base: ${failing.join(', ')}` });
    return;
  }
  const bisect = startBisect(fv.commits.length);
  saveFv(ctx, { ...fv, phase: 'bisect', failing, ...bisect, runs: fv.runs + 1 });
}

async function bisectStep(
  ctx: TickContext,
  port: FinalPort,
  fv: FinalVerification,
  checks: readonly AcceptanceCheck[],
): Promise<void> {
  const step = nextStep(fv);
  if (step.kind === 'probe') {
    const commit = fv.commits[step.prefix - 1]!;
    const passed = (await run(ctx, port, fv, commit, `bisect-${step.prefix}`, checks)).length === 0;
    const next = afterProbe(fv, step.prefix, passed);
    saveFv(ctx, { ...fv, ...next, runs: fv.runs + 1 });
    ctx.journal('bisect-step', { commit, prefix: step.prefix, passed, good: next.good, bad: next.bad });
    return;
  }
  const commit = fv.commits[step.culprit - 1]!;
  const culprit = childOfCommit(ctx.record, commit);
  if (!culprit) throw new Error(`final verification: no child owns the red commit ${commit}`);
  ctx.journal('culprit-found', {
    task: culprit.task_id,
    commit,
    failing: fv.failing,
    runs: fv.runs,
  });
  const rebuild = await planRebuild(ctx, port, fv, culprit.task_id, step.culprit);
  await port.keepRef(preRebuildRef(ctx.record.batch_id), fv.tip);
  saveFv(ctx, { ...fv, phase: 'evict', rebuild });
}

/** The new commits of the children integrated after the culprit, onto the last good commit. */
export async function planRebuild(
  ctx: TickContext,
  port: FinalPort,
  fv: FinalVerification,
  culprit: string,
  position: number,
): Promise<Rebuild> {
  const record = ctx.record;
  let head = position === 1 ? record.base_head : fv.commits[position - 2]!;
  const evicted = new Set([culprit]);
  const commits: Rebuild['commits'] = [];
  const conflicts: Rebuild['conflicts'] = [];
  // A lane based on the base or a kept commit has that base in the rebuilt branch's
  // history: merge-tree finds it as the merge base, as in a first integration.
  const onNewChain = new Set([record.base_head, ...fv.commits.slice(0, position - 1)]);
  const later = fv.commits.slice(position).map((sha) => {
    const child = childOfCommit(record, sha);
    if (!child) throw new Error(`final verification: no child owns ${sha}`);
    return child;
  });
  for (const child of later) {
    if (dependsOnAny(record, child, evicted)) {
      evicted.add(child.task_id);
      continue;
    }
    const lane = child.lane!;
    const merged = onNewChain.has(lane.base_head)
      ? await ctx.ports.git.mergeTree(head, lane.lane_commit!)
      : await port.replayTree(head, lane.base_head, lane.lane_commit!);
    if ('conflicts' in merged) {
      conflicts.push({ task_id: child.task_id, paths: merged.conflicts });
      evicted.add(child.task_id);
      continue;
    }
    head = await ctx.ports.git.integrationCommit(
      merged.tree,
      head,
      lane.lane_commit!,
      laneCommitTrailer(lane.lane_commit!),
    );
    commits.push({ task_id: child.task_id, commit: head });
  }
  return { from: fv.tip, to: head, culprit, evicted: [...evicted], commits, conflicts };
}

/** Moves the branch to the rebuilt tip (compare-and-swap), puts the lanes right, records it. */
async function evict(ctx: TickContext, port: FinalPort, fv: FinalVerification): Promise<boolean> {
  const rebuild = fv.rebuild!;
  const record = ctx.record;
  const tip = await ctx.ports.git.branchTip(record.branch);
  if (tip === rebuild.from) {
    if (!(await ctx.ports.git.advanceBranch(record.branch, rebuild.to, rebuild.from))) {
      saveFv(ctx, undefined); // moved under us: the next tick looks again
      return false;
    }
    ctx.ports.crashPoint('after-rebuild-update-ref');
  } else if (tip !== rebuild.to) {
    saveFv(ctx, undefined); // someone else moved it: lineage decides on the next tick
    return false;
  }
  const parked = new Set([rebuild.culprit, ...rebuild.conflicts.map((c) => c.task_id)]);
  const checks = fv.failing.join(', ');
  for (const id of rebuild.evicted) {
    const child = ctx.child(id);
    const lane = child.lane!;
    if (parked.has(id)) {
      await port.restoreLane({ ...lane, lane_commit: lane.lane_commit! });
      const kernel = ctx.ports.store.readKernel(id);
      if (kernel.kind === 'ok')
        ctx.ports.store.writeKernel(
          reopenAfterEviction(
            kernel.record,
            `The batch's final check(s) ${checks} failed once this change was integrated (bisected). Fix the change so they pass.`,
            ctx.now(),
          ),
        );
    } else await port.retireLane(lane, evictedRef(record.batch_id, id));
  }
  const position = fv.bad;
  const next: BatchRecord = applyEviction(ctx.record, {
    culprit: rebuild.culprit,
    culpritReason: `final_check_failed: ${checks} (first red at ${short(fv.commits[position - 1]!)}, found in ${fv.runs} runs)`,
    conflicts: rebuild.conflicts.map((c) => ({
      task_id: c.task_id,
      reason: `batch_integration_conflict: ${c.paths.join(', ')} (rebuilding without ${rebuild.culprit})`,
    })),
    keptCommits: fv.commits.slice(0, position - 1),
    replayed: rebuild.commits,
  });
  const { final_verification: _old, ...rest } = next;
  ctx.save({ ...rest, final_verification: { ...fv, phase: 'verify_rebuilt', tip: rebuild.to } });
  ctx.journal('evicted', {
    task: rebuild.culprit,
    evicted: rebuild.evicted,
    from: rebuild.from,
    to: rebuild.to,
    commits: rebuild.commits,
  });
  for (const id of rebuild.evicted)
    if (!parked.has(id)) ctx.journal('dependents-skipped', { task: rebuild.culprit, skipped: [id] });
  // Commits someone else put on the batch branch (adopted heads) are not replayed: the old
  // tip then stays under the ref, so they are never lost.
  if (record.adopted_heads.length === 0) await port.dropRef(preRebuildRef(record.batch_id));
  return true;
}

async function verifyRebuilt(
  ctx: TickContext,
  port: FinalPort,
  fv: FinalVerification,
  checks: readonly AcceptanceCheck[],
): Promise<void> {
  const rebuild = fv.rebuild!;
  // The last good commit unchanged (nothing re-integrated): the bisection already ran it green.
  const knownGood = rebuild.commits.length === 0 && fv.good > 0;
  const failing = knownGood ? [] : await run(ctx, port, fv, rebuild.to, 'rebuilt', checks);
  saveFv(ctx, undefined);
  if (failing.length > 0) {
    const culprit = ctx.child(rebuild.culprit);
    ctx.park(
      rebuild.culprit,
      `${culprit.reason}; the rebuilt tip ${short(rebuild.to)} is still red: ${failing.join(', ')}`,
    );
  }
}
