import { execa } from 'execa';
import { LanesError } from '../core/errors.js';

// The one way lanes runs git: argv arrays (never a shell string), hooks, pager and editor
// kept out of it, and a typed error that carries the command and its stderr.

export interface GitResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

export class GitError extends LanesError {
  override readonly name = 'GitError';
  constructor(
    readonly args: readonly string[],
    readonly gitExitCode: number | undefined,
    readonly stderr: string,
  ) {
    super(
      'git_failed',
      `git ${args.join(' ')} failed (${gitExitCode ?? 'did not run'}): ${stderr.trim()}`,
      1,
    );
  }
}

const GIT_ENV = {
  GIT_TERMINAL_PROMPT: '0',
  GIT_PAGER: 'cat',
  GIT_EDITOR: 'true',
  GIT_OPTIONAL_LOCKS: '0',
  LC_ALL: 'C',
};

// Hooks never run for lanes' own git work (SPEC §6).
const BASE_ARGS = ['-c', 'core.hooksPath=/dev/null', '-c', 'commit.gpgsign=false'];

export interface GitOptions {
  okCodes?: readonly number[];
  env?: Record<string, string>;
  input?: string;
}

/** Runs git in `cwd`; rejects with GitError unless the exit code is 0 or in `okCodes`. */
export async function git(
  cwd: string,
  args: readonly string[],
  options: GitOptions = {},
): Promise<GitResult> {
  const result = await execa('git', [...BASE_ARGS, ...args], {
    cwd,
    reject: false,
    stripFinalNewline: false,
    env: { ...GIT_ENV, ...options.env },
    extendEnv: true,
    ...(options.input !== undefined ? { input: options.input } : { stdin: 'ignore' as const }),
    maxBuffer: 256 * 1024 * 1024,
  });
  const exitCode = result.exitCode;
  const ok = exitCode === 0 || (exitCode !== undefined && (options.okCodes ?? []).includes(exitCode));
  if (!ok) throw new GitError(args, exitCode, String(result.stderr || result.message));
  return { stdout: String(result.stdout), stderr: String(result.stderr), exitCode: exitCode ?? 0 };
}

/** stdout with the final newline trimmed. */
export async function gitLine(
  cwd: string,
  args: readonly string[],
  options: GitOptions = {},
): Promise<string> {
  return (await git(cwd, args, options)).stdout.replace(/\n$/, '');
}

/** Splits NUL-separated output, dropping the empty tail. */
export function splitNul(text: string): string[] {
  return text.split('\0').filter((part) => part !== '');
}
