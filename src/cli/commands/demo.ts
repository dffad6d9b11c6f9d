import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { badInput } from '../../core/basics/errors.js';
import { loadPlan } from '../../store/plan-file.js';
import { createDemo, DEMO_BATCH } from '../../demo/demo-project.js';
import { acquireBatchLock } from '../../store/lock.js';
import { findRepo } from '../../store/state-dir.js';
import { parseCommand } from '../args.js';
import { createBatch, describePlan, preflight } from '../start/confirm.js';
import type { CommandContext } from '../context.js';
import { asTyped } from '../lanes-command.js';
import { chooseHost, drawsTui, parseHost } from '../batch-run/host-choice.js';
import { runBatch } from '../batch-run/run-batch.js';
import { runTui } from '../batch-run/lazy-tui.js';

const DEFAULT_DELAY_MS = 1500;

/** `lanes demo [--dir <dir>] [--headless] [--host ...]`: make the demo repo and plan, then run it. */
export async function demoCommand(ctx: CommandContext, argv: string[]): Promise<number> {
  const { values } = parseCommand(
    'demo',
    argv,
    { dir: { type: 'string' }, headless: { type: 'boolean' }, host: { type: 'string' } },
    0,
  );
  const host = parseHost(values.host);
  let dir: string;
  if (values.dir) {
    dir = resolve(ctx.cwd, values.dir);
    if (existsSync(dir) && readdirSync(dir).length > 0)
      throw badInput('usage', `lanes demo: ${dir} is not empty; pick a new folder`);
  } else dir = mkdtempSync(join(tmpdir(), 'lanes-demo-'));
  // LANES_DEMO_DELAY_MS: how long each scripted executor "works" (tests set 0).
  const delay = Number(process.env.LANES_DEMO_DELAY_MS ?? DEFAULT_DELAY_MS);
  const files = await createDemo(dir, Number.isFinite(delay) && delay >= 0 ? delay : DEFAULT_DELAY_MS);
  ctx.stderr(`demo project: ${files.repo}\nplan: ${files.plan}\n`);
  const repo = await findRepo(files.repo);
  const plan = loadPlan(files.plan);
  const checked = await preflight(repo, plan, {});
  const command = ['lanes', 'demo', ...argv].join(' ');
  if (drawsTui(values.headless)) {
    const create = async () => {
      const lock = await acquireBatchLock(repo.stateDir, DEMO_BATCH, command);
      await createBatch(repo, plan, checked, new Date());
      return lock;
    };
    const lines = describePlan(plan, checked).trimEnd().split('\n');
    const code = await runTui({
      repo,
      batchId: DEMO_BATCH,
      host: chooseHost(host, true),
      confirm: { lines, create },
    });
    ctx.stderr(`demo project: ${files.repo}\n`);
    return code;
  }
  ctx.stderr(describePlan(plan, checked));
  const lock = await acquireBatchLock(repo.stateDir, DEMO_BATCH, command);
  await createBatch(repo, plan, checked, new Date());
  const code = await runBatch(ctx, {
    repo,
    batchId: DEMO_BATCH,
    host: chooseHost(host, false),
    command,
    lock,
  });
  if (code === 3)
    ctx.stderr(
      `\nThe sqrt child is parked: its script keeps writing a wrong sqrt. Fix src/sqrt.mjs in its lane, then approve:\n` +
        `  ${asTyped(`lanes -C ${files.repo} resume --approve`)}\n`,
    );
  return code;
}
