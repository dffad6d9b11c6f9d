import { resolve } from 'node:path';
import { badInput } from '../../core/basics/errors.js';
import { loadPlan } from '../../store/plan-file.js';
import { findRepo } from '../../store/state-dir.js';
import { RepoSessions } from '../../git/runner/repo-sessions.js';
import { readStateFlush } from '../../store/durability.js';
import { parseCommand, positiveIntArg } from '../args.js';
import { preferenceArgs } from '../start/preference-args.js';
import { askConfirmation, createBatch, describePlan, preflight } from '../start/confirm.js';
import type { CommandContext } from '../context.js';
import { chooseHost, drawsTui, parseHost } from '../batch-run/host-choice.js';
import { preloadTui, runTui } from '../batch-run/lazy-tui.js';
import { HOSTS } from '../../hosts/hosts.js';

// Only what the confirmation needs is imported here: the batch's own modules (the
// coordinator, the machines, the lock) load when used, after the first frame of the TUI
// (docs/PERFORMANCE.md "first frame, session 12").

const USAGE = `usage: lanes start <plan> [--parallel N] [--headless] [--host ${HOSTS.names.join('|')}] [--yes] [--allow-overlap] [--executor NAME] [--model M] [--effort E] [--no-run]`;

/**
 * Starts loading what a headless batch runs with (the coordinator, the lock, the store): their
 * modules compile while the preflight waits for its git processes instead of after it.
 * (A failed load is the later import's to report.)
 */
function preloadBatch(): void {
  for (const load of [
    import('../batch-run/run-batch.js'),
    import('../../store/lock.js'),
    import('../../store/batch-files.js'),
    import('../../core/records/new-batch-record.js'),
  ])
    load.catch(() => {});
}

/** `lanes start <plan>`: confirm the plan, create the batch, and run it (or, with --no-run, print the first report). */
export async function startCommand(ctx: CommandContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(
    'start',
    argv,
    {
      parallel: { type: 'string' },
      headless: { type: 'boolean' },
      host: { type: 'string' },
      yes: { type: 'boolean', short: 'y' },
      'allow-overlap': { type: 'boolean' },
      executor: { type: 'string' },
      model: { type: 'string' },
      effort: { type: 'string' },
      'no-run': { type: 'boolean' },
      json: { type: 'boolean' },
    },
    1,
  );
  const file = positionals[0];
  if (!file) throw badInput('usage', USAGE);
  const host = parseHost(values.host);
  const parallel = positiveIntArg('start', 'parallel', values.parallel);
  const preferences = preferenceArgs('start', values);
  // git looks for the repository while the plan is read and checked (a bad plan is still
  // what is said first: the answer is awaited after it).
  const repoRead = findRepo(ctx.cwd);
  repoRead.catch(() => {});
  const plan = loadPlan(resolve(ctx.cwd, file));
  const drawing = drawsTui(values.headless) && !values['no-run'] && !values.json;
  // (what comes after the preflight, the TUI's Ink and React or the batch's own modules,
  // loads while the preflight's git runs)
  if (drawing) preloadTui();
  else if (!values['no-run']) preloadBatch();
  const repo = await repoRead;
  // The resolved executors, models and efforts go into the confirmed plan, so a resume
  // runs what was confirmed (src/cli/confirm.ts).
  const checking = preflight(
    repo,
    plan,
    { ...preferences, ...(parallel !== undefined ? { parallel } : {}) },
    { checkPrograms: !values['no-run'], allowOverlap: values['allow-overlap'] ?? false },
  );
  // A headless run starts the repository's long-lived git processes while the preflight's
  // reads are out: the thread waits for those anyway (the TUI's first frame does not wait).
  if (!drawing && !values['no-run']) {
    RepoSessions.of(repo.root).warm();
    void readStateFlush(repo.stateDir); // (never rejects; createBatch awaits it: store/durability.ts)
  }
  const checked = await checking;
  const command = ['lanes', 'start', ...argv].join(' ');
  // Each machine checked before anything is written: one that fails is named and left out.
  const machines =
    values['no-run'] || !checked.config.machines
      ? null
      : await (await import('../batch-run/batch-machines.js')).openMachinePool(repo, checked.config, plan);
  if (machines) checked.machines = machines.currentViews();
  if (drawing) {
    const create = async () => {
      const { acquireBatchLock } = await import('../../store/lock.js');
      const lock = await acquireBatchLock(repo.stateDir, plan.batch, command);
      await createBatch(repo, plan, checked, new Date());
      return lock;
    };
    const tuiHost = chooseHost(host, true);
    if (values.yes)
      return runTui({ repo, batchId: plan.batch, host: tuiHost, lock: await create(), machines });
    const lines = describePlan(plan, checked).trimEnd().split('\n');
    return runTui({ repo, batchId: plan.batch, host: tuiHost, confirm: { lines, create }, machines });
  }
  if (!values.json) ctx.stderr(describePlan(plan, checked));
  if (!values.yes && !(await askConfirmation('Start this batch? [y/N] '))) {
    await machines?.close();
    ctx.stderr('not confirmed; nothing was written\n');
    return 2;
  }
  const { acquireBatchLock } = await import('../../store/lock.js');
  const lock = await acquireBatchLock(repo.stateDir, plan.batch, command);
  try {
    await createBatch(repo, plan, checked, new Date());
  } catch (error) {
    await machines?.close();
    await lock.release();
    throw error;
  }
  if (values['no-run']) {
    try {
      const { currentReport } = await import('../../core/tick/tick.js');
      const { batchPorts } = await import('../batch-run/batch-ports.js');
      const { formatReport } = await import('../batch-run/print-report.js');
      const report = await currentReport(batchPorts(repo, plan.batch));
      ctx.stdout(values.json ? `${JSON.stringify(report)}\n` : formatReport(report));
      return 0;
    } finally {
      await lock.release();
    }
  }
  const { runBatch } = await import('../batch-run/run-batch.js');
  return runBatch(ctx, { repo, batchId: plan.batch, host: chooseHost(host, false), command, lock, machines });
}
