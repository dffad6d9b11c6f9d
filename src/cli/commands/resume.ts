import { resolve } from 'node:path';
import { badInput } from '../../core/basics/errors.js';
import { loadPlan } from '../../store/plan-file.js';
import { TERMINAL_BATCH_STATES } from '../../core/records/record.js';
import { checkReplan } from '../../core/ways-out/resume.js';
import type { Approval } from '../../core/ways-out/resume.js';
import { BatchStore } from '../../store/batch-store.js';
import { findRepo } from '../../store/state-dir.js';
import { batchIdArg, parseCommand, positiveIntArg } from '../args.js';
import { checkLimits } from '../../core/ways-out/reopen.js';
import { batchPorts } from '../batch-run/batch-ports.js';
import { checkResumePrograms, confirmedReplan } from '../start/confirm.js';
import type { CommandContext } from '../context.js';
import { formatReport } from '../batch-run/print-report.js';
import { chooseHost, drawsTui, parseHost } from '../batch-run/host-choice.js';
import { exitCodeFor, runBatch } from '../batch-run/run-batch.js';
import { acquireBatchLock } from '../../store/lock.js';
import { readStateFlush } from '../../store/durability.js';
import { runTui } from '../batch-run/lazy-tui.js';
import { LOCAL_MACHINE } from '../../core/basics/ids.js';
import { checkMoves, parseMove } from '../../core/ways-out/move.js';
import type { MoveRequest } from '../../core/ways-out/move.js';
import { loadConfig } from '../../store/config-file.js';

/** Each `--move <child>=<machine>`, or exit 2 naming the one that is not. */
function parseMoves(values: readonly string[]): MoveRequest[] {
  return values.map((text) => {
    const move = parseMove(text);
    if (typeof move === 'string') throw badInput('usage', `lanes resume: ${move}`);
    return move;
  });
}

/** The batch a command means when none is named: the only one that has not ended. */
export function defaultBatch(store: BatchStore, command: string): string {
  const open = store.list().filter((id) => !TERMINAL_BATCH_STATES.has(store.read(id)!.batch_state));
  if (open.length === 1) return open[0]!;
  if (open.length === 0) throw badInput('usage', `lanes ${command}: no batch to ${command} here; name one`);
  throw badInput('usage', `lanes ${command}: several batches have not ended (${open.join(', ')}); name one`);
}

/**
 * `lanes resume [<batch>] [--headless] [--host ...] [--approve] [--replan <plan>] [--budget N]
 * [--max-tokens N] [--parallel N] [--move <child>=<machine> ...]`
 */
export async function resumeCommand(ctx: CommandContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(
    'resume',
    argv,
    {
      headless: { type: 'boolean' },
      host: { type: 'string' },
      approve: { type: 'boolean' },
      replan: { type: 'string' },
      budget: { type: 'string' },
      'max-tokens': { type: 'string' },
      parallel: { type: 'string' },
      move: { type: 'string', multiple: true },
    },
    1,
  );
  const moves = parseMoves(values.move ?? []);
  if (moves.length && !values.approve)
    throw badInput('usage', 'lanes resume: --move needs --approve (a fresh confirmation)');
  const budget = positiveIntArg('resume', 'budget', values.budget);
  const parallel = positiveIntArg('resume', 'parallel', values.parallel);
  const maxTokens = positiveIntArg('resume', 'max-tokens', values['max-tokens']);
  if ((budget !== undefined || parallel !== undefined || maxTokens !== undefined) && !values.approve)
    throw badInput(
      'usage',
      'lanes resume: --budget, --max-tokens and --parallel need --approve (a fresh confirmation)',
    );
  const host = parseHost(values.host);
  if (values.replan && !values.approve)
    throw badInput('usage', 'lanes resume: --replan needs --approve (a fresh confirmation)');
  const repo = await findRepo(ctx.cwd);
  const flushRead = readStateFlush(repo.stateDir); // (beside the reads below: store/durability.ts)
  const store = new BatchStore(repo.stateDir);
  const batchId = batchIdArg('resume', positionals[0]) ?? defaultBatch(store, 'resume');
  const ports = batchPorts(repo, batchId);
  const record = ports.store.readRecord();
  const stored = store.readReport(batchId);
  // A batch that ended just before a crash may still have lanes to release or its final
  // report to write: then the coordinator runs once more to wrap it up.
  const wrapUp =
    stored?.batch_state !== record.batch_state ||
    ((record.batch_state === 'completed' || record.batch_state === 'cancelled') &&
      record.children.some((c) => c.state === 'integrated'));
  if (TERMINAL_BATCH_STATES.has(record.batch_state) && !wrapUp) {
    if (stored) ctx.stdout(formatReport(stored));
    ctx.stderr(`lanes: batch ${batchId} has ended (${record.batch_state}); nothing to resume\n`);
    return exitCodeFor({ state: record.batch_state, paused: false, waitingForReview: [], report: stored! });
  }
  let approval: Approval | undefined;
  if (values.approve) {
    approval = {
      confirmationTime: new Date().toISOString(),
      ...(budget !== undefined ? { budget } : {}),
      ...(parallel !== undefined ? { parallel } : {}),
      ...(maxTokens !== undefined ? { maxTokens } : {}),
    };
    checkLimits(record, approval); // exit 2 before anything is written
    if (moves.length) {
      const machines = loadConfig(repo.root).machines?.map((m) => m.name) ?? [LOCAL_MACHINE];
      checkMoves(record, moves, machines);
      approval.moves = moves;
    }
    if (!(Date.parse(approval.confirmationTime) > Date.parse(record.confirmation_time)))
      throw badInput(
        'usage',
        `lanes resume --approve: the clock is not past the recorded confirmation ${record.confirmation_time}`,
      );
    if (values.replan) {
      approval.replan = loadPlan(resolve(ctx.cwd, values.replan));
      checkReplan(ports.store.readPlan(), approval.replan);
      approval.replan = confirmedReplan(repo.root, approval.replan); // (exit 2 if it cannot run)
    }
  } else if (
    (record.batch_state === 'needs_human' || record.batch_state === 'budget_stopped') &&
    !drawsTui(values.headless)
  ) {
    if (stored) ctx.stdout(formatReport(stored));
    ctx.stderr(
      record.batch_state === 'needs_human'
        ? `lanes: batch ${batchId} needs a human; inspect the parked lanes, then: lanes resume ${batchId} --approve (or lanes drop ${batchId} <child>, lanes cancel ${batchId})\n`
        : `lanes: batch ${batchId}: ${stored?.next_action ?? `its budget is spent; go on with: lanes resume ${batchId} --approve --budget <n>`}\n`,
    );
    return 3;
  }
  checkResumePrograms(repo.root, approval?.replan ?? ports.store.readPlan(), record);
  await flushRead;
  const command = ['lanes', 'resume', ...argv].join(' ');
  if (drawsTui(values.headless)) {
    // In the TUI a parked batch waits on screen for `r`, the fresh confirmation.
    const lock = await acquireBatchLock(repo.stateDir, batchId, command);
    const tuiHost = chooseHost(host, true);
    return runTui({ repo, batchId, host: tuiHost, lock, ...(approval ? { approval } : {}) });
  }
  return runBatch(ctx, {
    repo,
    batchId,
    host: chooseHost(host, false),
    command,
    ...(approval ? { approval } : {}),
  });
}
