import { badInput, ExitCode } from '../../core/basics/errors.js';
import { BATCH_STATES } from '../../core/records/record.js';
import type { BatchState } from '../../core/records/record.js';
import { BatchStore } from '../../store/batch-store.js';
import { findRepo } from '../../store/state-dir.js';
import { batchIdArg, parseCommand, positiveIntArg } from '../args.js';
import type { CommandContext } from '../context.js';
import { PAUSED_NEXT_ACTION } from '../../core/tick/report-builder.js';
import { waitVerdict } from '../../core/ways-out/wait-verdict.js';
import { readLockHolder } from '../../store/lock.js';
import { isSameProcessAlive } from '../../process/process-info.js';
import { WAIT_TIMED_OUT } from '../exit-codes.js';
import { theBatch } from './the-batch.js';

const POLL_MS = 200;

/** Dispatch paused and nobody left to unpause it: the last report said so and no coordinator runs. */
function pausedForGood(store: BatchStore, stateDir: string, batchId: string, state: BatchState): boolean {
  if (state !== 'running') return false;
  // (no report read while a coordinator runs: this is asked at every poll)
  const holder = readLockHolder(stateDir, batchId);
  if (holder && isSameProcessAlive(holder.pid, holder.start_time)) return false;
  return store.readReport(batchId)?.next_action === PAUSED_NEXT_ACTION;
}

/** `lanes wait <batch> --until <state>[,<state>...] [--timeout S]` */
export async function waitCommand(ctx: CommandContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(
    'wait',
    argv,
    { until: { type: 'string' }, timeout: { type: 'string' } },
    1,
  );
  if (!values.until)
    throw badInput('usage', 'usage: lanes wait [<batch>] --until <state>[,<state>...] [--timeout S]');
  const wanted = values.until.split(',').map((s) => s.trim());
  for (const s of wanted)
    if (!(BATCH_STATES as readonly string[]).includes(s))
      throw badInput(
        'usage',
        `lanes wait: unknown state "${s.slice(0, 40)}" (one of ${BATCH_STATES.join(', ')})`,
      );
  const timeoutS = positiveIntArg('wait', 'timeout', values.timeout);
  const repo = await findRepo(ctx.cwd);
  const store = new BatchStore(repo.stateDir);
  const batchId = batchIdArg('wait', positionals[0]) ?? theBatch(store, 'wait');
  if (store.read(batchId) === null) throw badInput('state_missing', `no batch named "${batchId}"`);
  const deadline = timeoutS ? Date.now() + timeoutS * 1000 : Infinity;
  for (;;) {
    const state = store.read(batchId)!.batch_state;
    const verdict = waitVerdict(
      state,
      wanted as BatchState[],
      pausedForGood(store, repo.stateDir, batchId, state),
    );
    if (verdict.done) {
      ctx.stdout(`${state}\n`);
      if (verdict.exitCode !== ExitCode.ok)
        ctx.stderr(`lanes wait: ${batchId} is ${state}, not ${wanted.join(' or ')}\n`);
      return verdict.exitCode;
    }
    if (Date.now() >= deadline) {
      ctx.stderr(`lanes wait: ${batchId} is still ${state} after ${timeoutS} s\n`);
      return WAIT_TIMED_OUT;
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}
