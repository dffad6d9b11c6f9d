import { applyQa, checkFailed, recordExit } from '../records/kernel.js';
import type { KernelRecord } from '../records/kernel.js';
import type { PlanChild } from '../plan/plan.js';
import type { TickPorts } from '../ports/tick-ports.js';
import type { ChildRecord } from '../records/record.js';
import { scopeMatcher } from '../plan/scope.js';
import { LanesError } from '../basics/errors.js';

// What the lane kernel does when an executor ends (DESIGN §5): the exit recorded, QA in the
// lane, and — once QA passes — the delivery commit on the lane branch. The tick does it
// for every exit it is told of (observe.ts, deliver.ts); the coordinator does it beside the
// loop as soon as an executor exits (DESIGN §7, "An exit is finished beside the loop"), so
// that a lane's checks and commit never wait for, or hold up, the integrations of the
// others. Both go through the functions here, and both stay repeatable after a crash: the
// delivery commit is looked up by its trailers before one is made.

export interface LaneFacts {
  batchId: string;
  taskId: string;
  path: string;
  branch: string;
  baseHead: string;
  runId: string;
}

/** The facts of an enrolled child's lane, from its record. */
export function laneFactsOf(batchId: string, child: ChildRecord): LaneFacts {
  const lane = child.lane!;
  return {
    batchId,
    taskId: child.task_id,
    path: lane.path,
    branch: lane.branch,
    baseHead: lane.base_head,
    runId: lane.run_id!,
  };
}

type Ports = Pick<TickPorts, 'git' | 'qa' | 'store' | 'clock' | 'crashPoint'>;
type ExitFacts = { code: number | null; signal: string | null; host?: string };

/**
 * QA in the lane: the kernel as QA leaves it and the paths the lane changed. Nothing is
 * written: the caller writes the kernel, then journals the run (journalQa).
 */
export async function qaInLane(
  ports: Ports,
  lane: LaneFacts,
  planned: PlanChild,
  kernel: KernelRecord,
): Promise<{ kernel: KernelRecord; changed: readonly string[] }> {
  const changed = await ports.git.changedPaths(lane.path, lane.baseHead);
  // The delivery's tree is built while the checks run (deliverLane takes it if they passed
  // and left its files as they were).
  const inScope = scopeMatcher(planned.scope);
  const delivered = changed.filter((p) => inScope(p));
  if (delivered.length > 0) void ports.git.stageDelivery?.(lane.path, lane.baseHead, delivered);
  const qaRun = kernel.qa_runs.length + 1;
  const checks = await ports.qa.runChecks(lane.path, planned.acceptance, (check) =>
    ports.store.qaLogPath(lane.taskId, qaRun, check.id),
  );
  const next = applyQa(
    kernel,
    { scope: planned.scope, changedPaths: changed, checks },
    ports.clock.now().toISOString(),
  );
  return { kernel: next, changed };
}

/** The journal line of the kernel's last QA run (once the kernel is written). */
export function journalQa(store: Ports['store'], taskId: string, kernel: KernelRecord): void {
  const run = kernel.qa_runs.at(-1)!;
  store.journal(run.passed ? 'qa-passed' : 'qa-failed', {
    task: taskId,
    qa_run: run.n,
    failing: run.checks.filter(checkFailed).map((c) => c.id),
    outside_scope: run.outside_scope,
    empty_delivery: run.empty_delivery,
  });
}

/** The journal line of an executor's exit (once the kernel has it). */
export function journalExit(store: Ports['store'], taskId: string, exit: ExitFacts): void {
  store.journal('executor-exited', { task: taskId, code: exit.code, signal: exit.signal });
}

/**
 * The lane's delivery commit (DESIGN §6: the lane base its only parent, only paths inside the
 * scope): the one already made (found by its trailers), else made now; null when nothing
 * inside the scope changed. `changed`: the paths QA read a moment ago, if any.
 */
export async function deliverLane(
  ports: Ports,
  lane: LaneFacts,
  planned: PlanChild,
  changed?: readonly string[],
): Promise<string | null> {
  const git = ports.git;
  const ids = { batch: lane.batchId, task: lane.taskId, run: lane.runId, base: lane.baseHead };
  let commit = await git.findDelivery(lane.path, lane.branch, ids);
  if (commit === null) {
    const inScope = scopeMatcher(planned.scope);
    const paths = (changed ?? (await git.changedPaths(lane.path, lane.baseHead))).filter((p) => inScope(p));
    if (paths.length === 0) return null;
    commit = await git.commitDelivery(lane.path, lane.branch, paths, planned.goal, ids);
    ports.crashPoint('after-lane-commit', lane.taskId);
  }
  await git.syncLaneIndex(lane.path, commit);
  return commit;
}

/**
 * An executor's exit, ended beside the loop: recorded, QA run, and the delivery committed
 * when QA passed; the kernel written once, at the end, so a tick that reads it meanwhile
 * sees the executor still running, never a half-ended attempt. False (nothing done) when
 * the tick must decide, as for any exit: the lane is not there on its branch (the tick
 * parks it), the kernel is not this run's open attempt, or it has QA due already (a turn
 * end the tick was handed).
 */
export async function endAttempt(
  ports: Ports,
  lane: LaneFacts,
  planned: PlanChild,
  exit: ExitFacts,
): Promise<boolean> {
  const read = ports.store.readKernel(lane.taskId);
  if (read.kind !== 'ok' || read.record.run_id !== lane.runId) return false;
  if (read.record.lifecycle === 'done' || read.record.next_obligation === 'run_qa') return false;
  const look = await ports.git.lookAtLane(lane.path);
  if (!look.present || look.branch !== lane.branch) return false;
  let kernel = recordExit(read.record, exit, ports.clock.now().toISOString());
  let changed: readonly string[] | undefined;
  const qaDue = kernel.next_obligation === 'run_qa';
  if (qaDue) ({ kernel, changed } = await qaInLane(ports, lane, planned, kernel));
  // The commit before the kernel says done: a tick that sees it done finds the commit.
  // A lane branch someone deleted or moved meanwhile: the tick parks the child (deliver.ts).
  if (kernel.lifecycle === 'done')
    try {
      await deliverLane(ports, lane, planned, changed);
    } catch (error) {
      if (laneBranchMoved(error)) return false;
      throw error;
    }
  ports.store.writeKernel(kernel);
  journalExit(ports.store, lane.taskId, exit);
  if (qaDue) journalQa(ports.store, lane.taskId, kernel);
  return true;
}

/**
 * The message of a delivery refused because someone deleted or moved the lane branch
 * meanwhile (the git adapter's `lane_branch_moved`), else null: that child parks, the
 * batch goes on, nothing of the lane is touched.
 */
export function laneBranchMoved(error: unknown): string | null {
  return error instanceof LanesError && error.code === 'lane_branch_moved' ? error.message : null;
}
