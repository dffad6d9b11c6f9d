import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { isLanesError } from '../../core/basics/errors.js';
import { planAdvice } from '../../core/plan/plan-advice.js';
import { loadPlan } from '../../store/plan-file.js';
import { findRepo } from '../../store/state-dir.js';
import { withProductionReact } from '../../tui/production-mode.js';
import type { CommandContext } from '../context.js';
import { startCommand } from '../commands/start.js';
import { describePlan, preflight } from '../start/confirm.js';
import { editFile } from './editor.js';

// After `lanes plan draft` in a terminal (issue 27): the confirmation screen of `lanes
// start` on the written plan, with `e` to edit it in the user's editor. After each edit the
// plan is checked again as `lanes start` checks it (its problems shown, no `y` until they
// are gone); `y` starts the batch as `lanes start <file>` would, `n` leaves the file.

/** Whether the draft opens the screen: a terminal on both ends, not CI, not --no-confirm. */
export function confirmsDraft(noConfirm: boolean | undefined, env: NodeJS.ProcessEnv): boolean {
  const ci = [env.CI, env.CONTINUOUS_INTEGRATION].some((v) => v !== undefined && v !== 'false' && v !== '0');
  return !noConfirm && !ci && process.stdin.isTTY === true && process.stdout.isTTY === true;
}

export async function confirmDraft(ctx: CommandContext, file: string): Promise<number> {
  const { askOnScreen } = await withProductionReact(() => import('./draft-screen.js'));
  const shown = relative(ctx.cwd, file) || file;
  let notes: string[] = [];
  for (let edited = false; ; edited = true) {
    const check = await checkToStart(ctx.cwd, file);
    // (a redrawn screen replaces what the editor or the last screen left)
    if (edited) process.stdout.write('\x1b[H\x1b[2J');
    const answer = await askOnScreen([...notes, ...check.lines], check.startable);
    if (answer === 'start') return startCommand(ctx, [file, '--yes']);
    if (answer === 'quit') {
      ctx.stderr(`not started; the plan stays in ${shown} (lanes start ${shown} starts it)\n`);
      return 0;
    }
    const failed = editFile(file);
    notes = failed ? [failed] : [];
  }
}

/** The screen's lines: what `lanes start` would confirm, or what stops it (then no `y`). */
async function checkToStart(cwd: string, file: string): Promise<{ lines: string[]; startable: boolean }> {
  try {
    const plan = loadPlan(file);
    const repo = await findRepo(cwd);
    const checked = await preflight(repo, plan, {}, { checkPrograms: true });
    const advice = planAdvice(plan, (path) => existsSync(join(repo.root, path)));
    const lines = describePlan(plan, checked).trimEnd().split('\n');
    return { lines: [...lines, ...advice.map((a) => `advice: ${a}`)], startable: true };
  } catch (error) {
    if (!isLanesError(error)) throw error;
    return { lines: error.message.split('\n'), startable: false };
  }
}
