import { execa } from 'execa';
import { LanesError } from '../core/errors.js';

// The one way lanes runs git: argv arrays (never a shell string), hooks and the user's
// pager/editor kept out of it, and a typed error that carries the command and stderr.

export interface GitResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

export class GitError extends LanesError {
  override readonly name = 'GitError';
  constructor(
    readonly args: readonly string[],
    readonly exitCode_: number | undefined,
    readonly stderr: string,
  ) {
    super('git_failed', `git ${args.join(' ')} failed (${exitCode_ ?? 'did not run'}): ${stderr.trim()}`, 1);
  }
}

const GIT_ENV = {
  GIT_TERMINAL_PROMPT: '0',
  GIT_PAGER: 'cat',
  GIT_EDITOR: 'true',
  LC_ALL: 'C',
};

/** Runs git in `cwd`; rejects with GitError unless the exit code is in `okCodes`. */
export async function git(
  cwd: string,
  args: readonly string[],
  okCodes: readonly number[] = [0],
): Promise<GitResult> {
  const result = await execa('git', [...args], {
    cwd,
    reject: false,
    stripFinalNewline: false,
    env: GIT_ENV,
    extendEnv: true,
    stdin: 'ignore',
  });
  const exitCode = result.exitCode;
  if (result.failed && (exitCode === undefined || !okCodes.includes(exitCode)))
    throw new GitError(args, exitCode, String(result.stderr || result.message));
  return { stdout: String(result.stdout), stderr: String(result.stderr), exitCode: exitCode ?? 0 };
}

/** stdout with the final newline trimmed. */
export async function gitLine(cwd: string, args: readonly string[]): Promise<string> {
  return (await git(cwd, args)).stdout.replace(/\n$/, '');
}
