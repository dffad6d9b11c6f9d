import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';

// Git processes started off lanes' main thread. On Node 20 `spawn()` forks the whole
// coordinator and blocks its event loop until the child has exec'd (~8 ms a process,
// docs/BENCH.md), and the same loop draws the TUI. So every one-shot git process is started
// by a small helper process (a bare `node` that runs only the script below): lanes writes a
// request line to it and reads the answer when git is done, and its own loop never waits
// for a fork (docs/DECISIONS.md "Git speed"). If the helper cannot run, git runs in-process.

export interface HelperRequest {
  cwd: string;
  argv: readonly string[];
  /** Variables set on top of the environment lanes had when the helper started. */
  env: Record<string, string>;
  input?: string;
}

export interface HelperResult {
  exitCode: number | undefined;
  stdout: string;
  stderr: string;
  spawnError?: string;
}

// Plain JavaScript run with `node -e`: no file to find next to the bundle, no build step.
// One JSON line in (id, cwd, argv, env, input), one JSON line out when git has ended.
// When lanes goes away (stdin ends) the helper lets running git processes finish, then ends.
const HELPER_SOURCE = `
const { execFile } = require('node:child_process');
const { createInterface } = require('node:readline');
const out = (answer) => process.stdout.write(JSON.stringify(answer) + '\\n');
createInterface({ input: process.stdin }).on('line', (line) => {
  const req = JSON.parse(line);
  const child = execFile('git', req.argv, {
    cwd: req.cwd,
    env: { ...process.env, ...req.env },
    maxBuffer: 256 * 1024 * 1024,
    encoding: 'utf8',
  }, (error, stdout, stderr) => {
    const code = error && error.code;
    if (error && typeof code !== 'number')
      out({ id: req.id, exitCode: null, stdout, stderr, spawnError: error.message });
    else out({ id: req.id, exitCode: typeof code === 'number' ? code : 0, stdout, stderr });
  });
  if (child.stdin) {
    child.stdin.on('error', () => {});
    child.stdin.end(req.input);
  }
});
process.stdout.on('error', () => process.exit(0));
`;

interface Waiting {
  resolve(result: HelperResult): void;
}

export class GitHelper {
  private child: ChildProcess | null = null;
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 0;
  private buffer = '';
  /** Set when the helper could not start: git runs in-process from then on. */
  failed = false;

  run(request: HelperRequest): Promise<HelperResult> {
    const child = this.start();
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, { resolve });
      if (this.waiting.size === 1) this.hold(true);
      child.stdin?.write(`${JSON.stringify({ id, ...request })}\n`);
    });
  }

  private start(): ChildProcess {
    if (this.child) return this.child;
    const env = { ...process.env };
    delete env.NODE_OPTIONS; // the helper needs none of lanes' loaders or flags
    const child = spawn(process.execPath, ['-e', HELPER_SOURCE], {
      env,
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => this.receive(chunk));
    child.stdin?.on('error', () => {});
    const ended = (why: string) => {
      if (this.child !== child) return;
      this.child = null;
      this.buffer = '';
      for (const [id, w] of this.waiting) {
        this.waiting.delete(id);
        w.resolve({ exitCode: undefined, stdout: '', stderr: '', spawnError: `git helper ${why}` });
      }
    };
    child.on('exit', (code, signal) => ended(`ended (${code ?? signal})`));
    child.on('error', (error) => {
      this.failed = true;
      ended(`did not start: ${error.message}`);
    });
    this.child = child;
    this.hold(false);
    return child;
  }

  private receive(chunk: string): void {
    this.buffer += chunk;
    let newline: number;
    while ((newline = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, newline);
      this.buffer = this.buffer.slice(newline + 1);
      const answer = JSON.parse(line) as HelperResult & { id: number; exitCode: number | null };
      const w = this.waiting.get(answer.id);
      if (!w) continue;
      this.waiting.delete(answer.id);
      if (this.waiting.size === 0) this.hold(false);
      w.resolve({
        exitCode: answer.exitCode ?? undefined,
        stdout: answer.stdout,
        stderr: answer.stderr,
        ...(answer.spawnError ? { spawnError: answer.spawnError } : {}),
      });
    }
  }

  /** The helper keeps lanes alive only while an answer is awaited. */
  private hold(busy: boolean): void {
    const child = this.child;
    if (!child) return;
    const streams = [child.stdout, child.stdin] as unknown as ({ ref?(): void; unref?(): void } | null)[];
    if (busy) {
      child.ref();
      for (const s of streams) s?.ref?.();
    } else {
      child.unref();
      for (const s of streams) s?.unref?.();
    }
  }
}

let shared: GitHelper | null = null;

/** The process-wide helper, or null when git should run in-process (LANES_GIT_HELPER=0, or it failed). */
export function gitHelper(): GitHelper | null {
  if (process.env.LANES_GIT_HELPER === '0') return null;
  shared ??= new GitHelper();
  return shared.failed ? null : shared;
}
