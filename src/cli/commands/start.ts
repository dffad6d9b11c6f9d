import { resolve } from 'node:path';
import { badInput } from '../../core/errors.js';
import { loadPlan } from '../../core/plan.js';
import { currentReport } from '../../core/tick.js';
import { acquireBatchLock } from '../../store/lock.js';
import { findRepo } from '../../store/state-dir.js';
import { parseCommand, positiveIntArg } from '../args.js';
import { batchPorts } from '../batch-ports.js';
import { askConfirmation, createBatch, describePlan, preflight } from '../confirm.js';
import type { CommandContext } from '../context.js';
import { formatReport } from '../print-report.js';

const USAGE = 'usage: lanes start <plan> [--parallel N] [--headless] [--host pty|herdr|headless] [--yes] [--executor NAME] [--no-run]';

/** `lanes start <plan>`: confirm the plan, create the batch; with --no-run, stop at the first report. */
export async function startCommand(ctx: CommandContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(
    'start',
    argv,
    {
      parallel: { type: 'string' },
      headless: { type: 'boolean' },
      host: { type: 'string' },
      yes: { type: 'boolean', short: 'y' },
      executor: { type: 'string' },
      'no-run': { type: 'boolean' },
      json: { type: 'boolean' },
    },
    1,
  );
  const file = positionals[0];
  if (!file) throw badInput('usage', USAGE);
  if (values.host !== undefined && !['pty', 'herdr', 'headless'].includes(values.host))
    throw badInput('usage', `lanes start: --host must be pty, herdr or headless, got "${values.host}"`);
  const parallel = positiveIntArg('start', 'parallel', values.parallel);
  const plan = loadPlan(resolve(ctx.cwd, file));
  const repo = await findRepo(ctx.cwd);
  const checked = await preflight(repo, plan, {
    ...(parallel !== undefined ? { parallel } : {}),
    ...(values.executor !== undefined ? { executor: values.executor } : {}),
  });
  if (!values.json) ctx.stderr(describePlan(plan, checked));
  if (!values.yes && !(await askConfirmation('Start this batch? [y/N] '))) {
    ctx.stderr('not confirmed; nothing was written\n');
    return 2;
  }
  if (!values['no-run']) {
    ctx.stderr('lanes start: the coordinator loop is not in this version yet; use --no-run and lanes tick\n');
    return 1;
  }
  const lock = await acquireBatchLock(repo.stateDir, plan.batch, ['lanes', 'start', ...argv].join(' '));
  try {
    await createBatch(repo, plan, checked, new Date());
    const report = await currentReport(batchPorts(repo, plan.batch));
    ctx.stdout(values.json ? `${JSON.stringify(report)}\n` : formatReport(report));
    return 0;
  } finally {
    await lock.release();
  }
}
