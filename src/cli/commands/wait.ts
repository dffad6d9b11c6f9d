import { badInput, ExitCode } from '../../core/errors.js';
import { BATCH_STATES, TERMINAL_BATCH_STATES } from '../../core/record.js';
import type { BatchState } from '../../core/record.js';
import { BatchStore } from '../../store/batch-store.js';
import { findRepo } from '../../store/state-dir.js';
import { batchIdArg, parseCommand, positiveIntArg } from '../args.js';
import type { CommandContext } from '../context.js';
import { exitCodeForState } from '../exit-codes.js';

const POLL_MS = 200;

/** Like exitCodeForState, but a wait that ends on prepared or running was satisfied: 0. */
function waitExitCode(state: BatchState): number {
  return state === 'prepared' || state === 'running' ? ExitCode.ok : exitCodeForState(state);
}

/** `lanes wait <batch> --until <state>[,<state>...] [--timeout S]` */
export async function waitCommand(ctx: CommandContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(
    'wait',
    argv,
    { until: { type: 'string' }, timeout: { type: 'string' } },
    1,
  );
  const batchId = batchIdArg('wait', positionals[0]);
  if (!batchId || !values.until)
    throw badInput('usage', 'usage: lanes wait <batch> --until <state>[,<state>...] [--timeout S]');
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
  if (store.read(batchId) === null) throw badInput('state_missing', `no batch named "${batchId}"`);
  const deadline = timeoutS ? Date.now() + timeoutS * 1000 : Infinity;
  for (;;) {
    const state = store.read(batchId)!.batch_state;
    if (wanted.includes(state) || TERMINAL_BATCH_STATES.has(state)) {
      ctx.stdout(`${state}\n`);
      return waitExitCode(state);
    }
    if (Date.now() >= deadline) {
      ctx.stderr(`lanes wait: ${batchId} is still ${state} after ${timeoutS} s\n`);
      return ExitCode.unexpected;
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}
