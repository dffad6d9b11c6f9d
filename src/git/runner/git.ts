import { execFile } from 'node:child_process';
import { LanesError } from '../../core/basics/errors.js';
import { afterTurn } from '../../process/thread-share.js';
import { processHelper } from './git-helper.js';
import type { GitHelper } from './git-helper.js';

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

export const GIT_ENV = {
  GIT_TERMINAL_PROMPT: '0',
  GIT_PAGER: 'cat',
  GIT_EDITOR: 'true',
  GIT_OPTIONAL_LOCKS: '0',
  LC_ALL: 'C',
};

// Hooks never run for lanes' own git work (DESIGN §6).
export const BASE_ARGS = ['-c', 'core.hooksPath=/dev/null', '-c', 'commit.gpgsign=false'];

export interface GitOptions {
  okCodes?: readonly number[];
  env?: Record<string, string>;
  input?: string;
}

/**
 * Runs git in `cwd`; rejects with GitError unless the exit code is 0 or in `okCodes`. What
 * the caller does with the answer runs in a turn of the coordinator's thread
 * (process/thread-share.ts): a hundred lanes' answers coming back together resume one turn's
 * share at a time, with keys and frames between them.
 */
export async function git(
  cwd: string,
  args: readonly string[],
  options: GitOptions = {},
): Promise<GitResult> {
  const { exitCode, stdout, stderr, spawnError } = await afterTurn(
    runGit(cwd, [...BASE_ARGS, ...args], options),
  );
  const ok = exitCode === 0 || (exitCode !== undefined && (options.okCodes ?? []).includes(exitCode));
  if (!ok) throw new GitError(args, exitCode, stderr || spawnError || '');
  return { stdout, stderr, exitCode: exitCode ?? 0 };
}

/**
 * Commands that read or change git's list of worktrees (`git worktree …`, and `git branch`,
 * which looks at every worktree's HEAD). Git does not lock that list: run side by side, one
 * dies on another's half-made entry ("failed to read .git/worktrees/<id>/commondir") or
 * cannot lock `.git/config`. So lanes runs them one at a time, and nothing else waits.
 */
export function isWorktreeBookkeeping(args: readonly string[]): boolean {
  let i = 0;
  while (args[i] === '-c' || args[i] === '-C') i += 2;
  return args[i] === 'worktree' || args[i] === 'branch';
}

interface RawResult {
  exitCode: number | undefined;
  stdout: string;
  stderr: string;
  spawnError?: string;
}

// Node's execFile, not execa, for git alone: a batch makes ~33 git calls a child, and
// execa's per-call option handling, streams and abort signals cost ~4 ms of main-thread
// CPU a call (docs/DECISIONS.md). Still an argv array, never a shell.
function runGit(cwd: string, argv: string[], options: GitOptions): Promise<RawResult> {
  const helper = processHelper();
  const serial = isWorktreeBookkeeping(argv);
  // Until the helper has started, git runs in-process: the first frame of `lanes start` (its
  // preflight's git) does not wait for a node start-up. Worktree bookkeeping started
  // in-process stays in one queue until it has drained, so two never run side by side.
  if (helper && helper.ready && (!serial || inProcessSerialPending === 0))
    return inHelper(helper, cwd, argv, options, serial);
  helper?.warm(); // (starting: from its ready on, git runs there)
  if (!serial) return runInProcess(cwd, argv, options);
  inProcessSerialPending++;
  const run = inProcessSerial.then(() =>
    helper?.ready ? inHelper(helper, cwd, argv, options, serial) : runInProcess(cwd, argv, options),
  );
  const settled = () => {
    inProcessSerialPending--;
  };
  inProcessSerial = run.then(settled, settled); // (a failed one does not stop the ones after it)
  return run;
}

/** Off the main thread (git-helper.ts); git's own variables as they are now. */
function inHelper(
  helper: GitHelper,
  cwd: string,
  argv: string[],
  options: GitOptions,
  serial: boolean,
): Promise<RawResult> {
  const current = Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] => entry[0].startsWith('GIT_') && entry[1] !== undefined,
    ),
  );
  return helper.run({
    cwd,
    argv,
    env: { ...current, ...GIT_ENV, ...options.env },
    ...(options.input !== undefined ? { input: options.input } : {}),
    ...(serial ? { serial } : {}),
  });
}

/** The serial commands run in-process (no helper, or not yet): each after the one before. */
let inProcessSerial: Promise<void> = Promise.resolve();
let inProcessSerialPending = 0;

function runInProcess(cwd: string, argv: string[], options: GitOptions): Promise<RawResult> {
  return new Promise((resolve) => {
    const child = execFile(
      'git',
      argv,
      {
        cwd,
        env: { ...process.env, ...GIT_ENV, ...options.env },
        maxBuffer: 256 * 1024 * 1024,
        encoding: 'utf8',
      },
      (error, stdout, stderr) => {
        const code = (error as { code?: unknown } | null)?.code;
        if (error && typeof code !== 'number')
          resolve({ exitCode: undefined, stdout, stderr, spawnError: error.message });
        else resolve({ exitCode: typeof code === 'number' ? code : 0, stdout, stderr });
      },
    );
    // git may exit before it reads its input (a bad argument): that is its exit code's to
    // report, not an EPIPE that takes the process down.
    child.stdin?.on('error', () => {});
    child.stdin?.end(options.input);
  });
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
