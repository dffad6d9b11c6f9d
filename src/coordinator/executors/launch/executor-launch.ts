import { closeSync, constants, mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { fillTemplate } from '../../../core/plan/argv-template.js';
import type { ExecutorProfile } from '../../../core/settings/config.js';
import type { PlanChild } from '../../../core/plan/plan.js';

// What an executor is told and how it is started: the prompt (goal, scope, acceptance,
// the rules, the rework feedback) written outside the work tree, and the profile's argv
// template filled in argument by argument — nothing is ever re-split by a shell.

export interface PromptInput {
  batchId: string;
  child: PlanChild;
  lanePath: string;
  attempt: number;
  reworkFeedback: string | null;
}

export function buildPrompt(input: PromptInput): string {
  const { child } = input;
  const checks = child.acceptance.map(
    (a) => `- ${a.id}: ${typeof a.run === 'string' ? a.run : JSON.stringify(a.run)}`,
  );
  const parts = [
    `# Task ${child.id} (batch ${input.batchId}, attempt ${input.attempt})`,
    `Goal: ${child.goal}`,
    `You work in ${input.lanePath}, a git worktree of its own.`,
    `Change only paths inside this scope:\n${child.scope.map((s) => `- ${s}`).join('\n')}`,
    `When you are done (you end your turn or exit), lanes runs these acceptance checks in the worktree; the task is done only when all pass:\n${checks.join('\n')}`,
    'Do not commit, and do not change anything outside the scope: lanes commits your work itself, and changes outside the scope fail the task.',
  ];
  if (child.prompt) parts.push(child.prompt);
  if (input.reworkFeedback) parts.push(`## The previous attempt did not pass\n${input.reworkFeedback}`);
  return `${parts.join('\n\n')}\n`;
}

/** Where an attempt's transcript and exit status go, in its child's log folder. */
export function attemptFiles(logDir: string, attempt: number): { logPath: string; statusPath: string } {
  return {
    logPath: join(logDir, `attempt-${attempt}.log`),
    statusPath: join(logDir, `attempt-${attempt}.status`),
  };
}

export function writePromptFile(logDir: string, attempt: number, prompt: string): string {
  mkdirSync(logDir, { recursive: true });
  const path = join(logDir, `prompt-${attempt}.md`);
  const { O_WRONLY, O_CREAT, O_TRUNC, O_NOFOLLOW } = constants; // (never through a planted link)
  const fd = openSync(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0o644);
  try {
    writeSync(fd, prompt);
  } finally {
    closeSync(fd);
  }
  return path;
}

export interface TemplateValues {
  prompt: string;
  prompt_file: string;
  task: string;
  lane: string;
  run: string;
  model?: string | undefined;
  effort?: string | undefined;
}

/** Fills the profile's argv template (src/core/argv-template.ts); an argument stays one argument. */
export function fillArgv(profile: ExecutorProfile, values: TemplateValues): string[] {
  return fillTemplate(profile.argv, {
    ...values,
    model: values.model ?? profile.model,
    effort: values.effort ?? profile.effort,
    permission_mode: profile.permission_mode,
    approval_policy: profile.approval_policy,
  });
}

/** The argument of a template that is the prompt, whole (`{prompt}`), if there is one. */
export function promptIndexOf(argv: readonly string[]): number | null {
  const i = argv.indexOf('{prompt}');
  return i >= 0 ? i : null;
}
