import { randomUUID } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { execa } from 'execa';
import YAML from 'yaml';
import { AGENTS } from '../../agents/agents.js';
import { badInput, isLanesError, LanesError } from '../../core/basics/errors.js';
import { parsePlanText } from '../../core/plan/plan.js';
import { planAdvice } from '../../core/plan/plan-advice.js';
import { executorProfiles } from '../../core/settings/config.js';
import { git } from '../../git/runner/git.js';
import { loadConfig } from '../../store/config-file.js';
import { findRepo } from '../../store/state-dir.js';
import { parseCommand, positiveIntArg } from '../args.js';
import type { CommandContext } from '../context.js';
import { planCheck } from '../commands/plan-check.js';
import { draftPrompt, fixPrompt, planText } from './draft-prompt.js';
import { confirmDraft, confirmsDraft } from './draft-confirm.js';

// `lanes plan draft "<goal>"` (issue 27): an agent, headless and read-only, writes a plan
// for the goal; lanes checks it as `plan check` does plus the plan advice
// (src/core/plan/plan-advice.ts) and sends what is wrong back into the same session until
// it passes or the rounds run out. Nothing is written unless it passes; the work tree
// must be as it was (else exit 4, nothing written).

export const planDraftUsage =
  'lanes plan draft "<goal>" [--executor claude|codex] [-o <file>] [--rounds N] [--no-confirm]';
const DEFAULT_ROUNDS = 3;
const ROUND_TIMEOUT_MS = 10 * 60_000;

export async function planDraft(ctx: CommandContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(
    'plan draft',
    argv,
    {
      executor: { type: 'string' },
      output: { type: 'string', short: 'o' },
      rounds: { type: 'string' },
      'no-confirm': { type: 'boolean' },
    },
    1,
  );
  const goal = positionals[0]?.trim();
  if (!goal) throw badInput('usage', `usage: ${planDraftUsage}`);
  const rounds = positiveIntArg('plan draft', 'rounds', values.rounds) ?? DEFAULT_ROUNDS;
  const out = resolve(ctx.cwd, values.output ?? 'plan.yaml');
  if (!/\.ya?ml$/i.test(out)) throw badInput('usage', 'lanes plan draft: -o names a .yaml or .yml file');
  if (existsSync(out))
    throw badInput(
      'file_exists',
      `lanes plan draft: ${relative(ctx.cwd, out)} already there (nothing written)`,
    );
  const repo = await findRepo(ctx.cwd);
  const name = values.executor ?? 'claude';
  const profile = executorProfiles(loadConfig(repo.root))[name];
  const agent = profile?.agent ? AGENTS[profile.agent] : undefined;
  if (!profile || !agent?.readOnly)
    throw badInput(
      'usage',
      `lanes plan draft: --executor ${name} is not an agent with a read-only mode (claude, codex)`,
    );
  const run = agent.readOnly;
  const before = await treeState(repo.root);
  let session: string | null = null;
  let prompt = draftPrompt(goal);
  let problems: string[] = [];
  let text = '';
  for (let round = 1; round <= rounds; round++) {
    ctx.stderr(`lanes: plan draft round ${round} of ${rounds} (${name})\n`);
    const [program, ...args] = run.argv(profile.argv[0]!, prompt, session, randomUUID());
    const result = await execa(program!, args, {
      cwd: repo.root,
      env: profile.env,
      stdin: 'ignore',
      reject: false,
      timeout: ROUND_TIMEOUT_MS,
    });
    let answer: string | null = null;
    let failure: string | null = null;
    for (const line of String(result.stdout).split('\n')) {
      session = run.sessionFrom(line) ?? session;
      answer = run.answerFrom(line) ?? answer;
      failure = run.failureFrom(line) ?? failure;
    }
    // The agent's own failure is not a plan to check (nor worth another round).
    if (failure !== null)
      throw new LanesError(
        'draft_failed',
        `lanes plan draft: ${name} failed: ${failure} (nothing written)`,
        4,
      );
    if (answer === null)
      throw new LanesError(
        'draft_failed',
        `lanes plan draft: ${name} gave no answer (exit ${result.exitCode}): ${String(result.stderr).slice(-400)}`,
        4,
      );
    text = planText(answer);
    problems = check(text, repo.root);
    if (problems.length === 0) break;
    prompt = fixPrompt(problems);
  }
  if ((await treeState(repo.root)) !== before)
    throw new LanesError(
      'draft_changed_tree',
      `lanes plan draft: ${name} changed the work tree (nothing written); see git status`,
      4,
    );
  if (problems.length > 0)
    throw badInput(
      'plan_invalid',
      `lanes plan draft: the plan still has problems after ${rounds} rounds (nothing written):\n${problems.map((p) => `  ${p}`).join('\n')}`,
    );
  writeFileSync(out, text, { flag: 'wx' });
  ctx.stdout(`wrote ${relative(ctx.cwd, out)}\n`);
  const checked = planCheck(ctx, [out]);
  // In a terminal the confirmation screen opens on it (`e` edits it, `y` starts it).
  if (!confirmsDraft(values['no-confirm'], process.env)) return checked;
  return confirmDraft(ctx, out);
}

/** What is wrong with a drafted plan: `plan check`'s problems, then the advice. */
function check(text: string, root: string): string[] {
  try {
    const plan = parsePlanText(text, 'draft.yaml', YAML);
    return planAdvice(plan, (path) => existsSync(join(root, path)));
  } catch (error) {
    if (!isLanesError(error)) throw error;
    // (plan_invalid: a first line naming the file, then one problem a line)
    const lines = error.message.split('\n');
    return lines.length > 1 ? lines.slice(1).map((l) => l.trim()) : lines;
  }
}

/** HEAD and every change in the work tree, tracked or not: equal before and after means untouched. */
async function treeState(root: string): Promise<string> {
  const head = await git(root, ['rev-parse', 'HEAD'], { okCodes: [128] });
  const status = await git(root, ['status', '--porcelain=v1', '-z', '--untracked-files=all']);
  return `${head.stdout}\0${status.stdout}`;
}
