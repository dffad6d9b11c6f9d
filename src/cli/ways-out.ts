import { loadConfig } from '../store/config-file.js';
import { ExitCode, isLanesError } from '../core/basics/errors.js';
import type { BatchRecord } from '../core/records/record.js';
import { INTEGRATED_STATES, TERMINAL_BATCH_STATES } from '../core/records/record.js';
import type { Report } from '../core/records/report.js';
import { tick } from '../core/tick/tick.js';
import type { TickInput } from '../core/tick/tick.js';
import { Steward } from '../coordinator/lanes/steward.js';
import { stopRecordedExecutor } from '../coordinator/executors/stop-executors.js';
import { trashAndJournal } from '../coordinator/lanes/trash.js';
import type { Trashed } from '../coordinator/lanes/trash.js';
import type { JournalEntry } from '../store/journal.js';
import type { BatchLock } from '../store/lock.js';
import { acquireBatchLock, isHolderAlive, readLockHolder } from '../store/lock.js';
import type { CoordinatorRequest } from '../store/requests.js';
import { removeRequest, requestsDir, writeRequest } from '../store/requests.js';
import type { RepoPaths } from '../store/state-dir.js';
import { existsSync } from 'node:fs';
import { batchPorts } from './batch-run/batch-ports.js';
import { LaneWorktrees } from '../git/ports/lane-worktrees.js';
import type { CommandContext } from './context.js';
import { formatReport } from './batch-run/print-report.js';
import { openRecordPool, stopOnMachines } from './batch-run/offline-machines.js';
import type { MachinePool } from '../machines/link/machine-pool.js';

// `lanes drop` and `lanes cancel` (docs/DECISIONS.md, "No dead ends"). With nobody running
// the batch, the command takes the lock and does it itself: stops executors a gone
// coordinator left running, ticks with the request, releases integrated lanes (cancel),
// moves dropped lanes to the trash. Lanes on machines: their executors are ended there, and
// a batch that ended (cancel) has what it left there removed, their work kept here. With a live coordinator holding the lock, it leaves a
// request for it (src/store/requests.ts) and waits until the record shows it done.

export const HANDOVER_TIMEOUT_MS = 30_000;
const POLL_MS = 100;

export interface WayOut {
  repo: RepoPaths;
  batchId: string;
  request: CoordinatorRequest;
  command: string;
  /** The record shows the request carried out. */
  done: (record: BatchRecord) => boolean;
}

export async function carryOut(ctx: CommandContext, way: WayOut): Promise<number> {
  let lock: BatchLock;
  try {
    lock = await acquireBatchLock(way.repo.stateDir, way.batchId, way.command);
  } catch (error) {
    if (isLanesError(error) && error.code === 'lock_held') return handOver(ctx, way);
    throw error;
  }
  let pool: MachinePool | null = null;
  try {
    const ports = batchPorts(way.repo, way.batchId);
    const before = ports.store.readRecord();
    pool = await openRecordPool(way.repo, before, (name, why) =>
      ctx.stderr(`lanes ${way.request.action}: machine ${name} not reached: ${why}\n`),
    );
    const stopping =
      way.request.action === 'cancel'
        ? before.children.filter((c) => c.lane && !INTEGRATED_STATES.has(c.state)).map((c) => c.task_id)
        : [way.request.task_id];
    for (const task of stopping) await stopRecordedExecutor(ports.store.readKernel(task));
    if (pool) await stopOnMachines(pool, way.batchId, before, stopping);
    const input: TickInput =
      way.request.action === 'cancel'
        ? { cancel: { reason: way.request.reason } }
        : { drops: [{ task_id: way.request.task_id, reason: way.request.reason }] };
    let report: Report = await tick(ports, input);
    let released = 0;
    const worktrees = new LaneWorktrees(way.repo.root);
    if (way.request.action === 'cancel') {
      const config = loadConfig(way.repo.root);
      const steward = new Steward(
        way.repo.root,
        way.batchId,
        config,
        (t) => ports.store.logDir(t),
        worktrees,
      );
      for (const h of report.handoffs) {
        const commit = report.children.find((c) => c.task_id === h.task_id)?.commit;
        if (h.action !== 'release' || !commit) continue;
        const kept = await steward.release(h, commit, before.branch);
        if (kept) ctx.stderr(`lanes: ${h.task_id}: ${kept.why}\n`);
        else released++;
      }
    }
    const trashed = await trashAndJournal(worktrees, ports.store, ports.store.readRecord());
    if (released > 0) report = await tick(ports, {}); // records the releases
    const after = ports.store.readRecord();
    if (pool && TERMINAL_BATCH_STATES.has(after.batch_state))
      await pool.cleanBatch(way.batchId, after.children);
    ctx.stdout(formatReport(report));
    printTrashed(ctx, trashed);
    return ExitCode.ok;
  } finally {
    await pool?.close();
    await lock.release();
  }
}

/** Why the coordinator refused this request, from the journal entries written since it was left. */
function refusalSince(entries: readonly JournalEntry[], way: WayOut): string | null {
  if (way.request.action !== 'drop') return null;
  const task = way.request.task_id;
  const refused = entries.find((e) => e.event === 'drop-refused' && e.task === task);
  return refused ? String(refused.why) : null;
}

function printTrashed(ctx: CommandContext, trashed: Trashed[]): void {
  for (const t of trashed)
    ctx.stdout(
      `${t.task_id}: work kept on its lane branch (${t.branch_tip.slice(0, 12)}); worktree moved to ${t.to}\n`,
    );
}

/** A live coordinator runs the batch: leave it the request, wait until the record shows it done. */
async function handOver(ctx: CommandContext, way: WayOut): Promise<number> {
  const holder = readLockHolder(way.repo.stateDir, way.batchId);
  const file = writeRequest(way.repo.stateDir, way.batchId, way.request);
  ctx.stderr(
    `lanes: batch ${way.batchId} is run by pid ${holder?.pid ?? '?'} (${holder?.command ?? 'another lanes'}); asked it to ${way.request.action}\n`,
  );
  const ports = batchPorts(way.repo, way.batchId);
  const asked = ports.store.journalFile.read().entries.length;
  const deadline = Date.now() + HANDOVER_TIMEOUT_MS;
  for (;;) {
    const record = ports.store.readRecord();
    const taken = !existsSync(file);
    if (way.done(record) && taken) {
      const report = ports.store.store.readReport(way.batchId);
      if (report) ctx.stdout(formatReport(report));
      return ExitCode.ok;
    }
    // Taken and refused (the child was integrated meanwhile): say why, as the command
    // itself would have refused it.
    const refusal = taken ? refusalSince(ports.store.journalFile.read().entries.slice(asked), way) : null;
    if (refusal) {
      ctx.stderr(`lanes ${way.request.action}: refused: ${refusal}\n`);
      return ExitCode.badInput;
    }
    // The holder died before it took the request (kill -9, a closed terminal): nobody will
    // carry it out, so this command does, taking the lock over as any command would.
    const now = readLockHolder(way.repo.stateDir, way.batchId);
    if (existsSync(file) && (now === null || !isHolderAlive(now))) {
      removeRequest(file);
      ctx.stderr(`lanes: pid ${holder?.pid ?? '?'} is gone without doing it; doing it here\n`);
      return carryOut(ctx, way);
    }
    if (Date.now() >= deadline) {
      ctx.stderr(
        `lanes: the coordinator did not carry out the request within ${HANDOVER_TIMEOUT_MS / 1000} s; it waits in ${requestsDir(way.repo.stateDir, way.batchId)}\n`,
      );
      return ExitCode.unexpected;
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}
