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

/** A process whose output goes to a log file (bounded) and whose tail comes back: a QA check. */
export interface CheckRequest {
  cwd: string;
  file: string;
  args: readonly string[];
  /** The whole environment of the process. */
  env: Record<string, string>;
  logPath: string | null;
  logLimit: number;
  tailBytes: number;
  timeoutMs: number;
}

export interface CheckResult {
  exitCode: number | null;
  timedOut: boolean;
  tail: string;
  spawnError?: string;
}

// Plain JavaScript run with `node -e`: no file to find next to the bundle, no build step.
// One JSON line in, one JSON line out when the process has ended: `git` requests (argv,
// env on top of the helper's, input; stdout and stderr back) and `check` requests (its
// whole env; stdout and stderr interleaved into a bounded log file, the tail back; run in
// its own process group, killed with it at the timeout, and what it left running killed
// when it exits). When lanes goes away (stdin ends) running processes finish, then it ends.
const HELPER_SOURCE = `
const { execFile, spawn } = require('node:child_process');
const fs = require('node:fs');
const { createInterface } = require('node:readline');
const out = (answer) => process.stdout.write(JSON.stringify(answer) + '\\n');
function runGit(req) {
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
}
function runCheck(req) {
  let fd = null;
  let written = 0;
  let tail = '';
  let timedOut = false;
  let spawnError;
  const take = (chunk) => {
    const text = chunk.toString();
    tail = (tail + text).slice(-req.tailBytes);
    if (fd !== null && written < req.logLimit) {
      const part = Buffer.from(text).subarray(0, req.logLimit - written);
      fs.writeSync(fd, part);
      written += part.length;
    }
  };
  try {
    if (req.logPath) fd = fs.openSync(req.logPath, 'w');
  } catch (error) {
    out({ id: req.id, exitCode: null, timedOut: false, tail: '', spawnError: error.message });
    return;
  }
  const child = spawn(req.file, req.args, { cwd: req.cwd, env: req.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const killGroup = () => { try { if (child.pid) process.kill(-child.pid, 'SIGKILL'); } catch {} };
  const timer = setTimeout(() => { timedOut = true; killGroup(); }, req.timeoutMs);
  child.stdout.on('data', take);
  child.stderr.on('data', take);
  let finished = false;
  const finish = (code) => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    if (spawnError && !timedOut) take('\\n' + spawnError + '\\n');
    if (timedOut) take('\\n[lanes] check ' + req.checkId + ' timed out after ' + req.timeoutMs + ' ms and was killed\\n');
    if (fd !== null) {
      if (written >= req.logLimit) fs.writeSync(fd, '\\n[lanes] log cut at ' + req.logLimit + ' bytes\\n');
      fs.closeSync(fd);
    }
    out({ id: req.id, exitCode: timedOut || typeof code !== 'number' ? null : code, timedOut, tail, ...(spawnError ? { spawnError } : {}) });
  };
  child.on('error', (error) => { spawnError = error.message; if (!child.pid) finish(null); });
  child.on('exit', () => { clearTimeout(timer); killGroup(); });
  child.on('close', (code) => finish(code));
}
createInterface({ input: process.stdin }).on('line', (line) => {
  const req = JSON.parse(line);
  if (req.kind === 'check') runCheck(req);
  else runGit(req);
});
process.stdout.on('error', () => process.exit(0));
`;

interface Waiting {
  resolve(result: unknown): void;
}

export class GitHelper {
  private child: ChildProcess | null = null;
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 0;
  private buffer = '';
  /** Set when the helper could not start: git runs in-process from then on. */
  failed = false;

  run(request: HelperRequest): Promise<HelperResult> {
    return this.ask<HelperResult & { exitCode: number | null }>({ kind: 'git', ...request }).then((a) => ({
      exitCode: a.exitCode ?? undefined,
      stdout: a.stdout,
      stderr: a.stderr,
      ...(a.spawnError ? { spawnError: a.spawnError } : {}),
    }));
  }

  check(request: CheckRequest & { checkId: string }): Promise<CheckResult> {
    return this.ask<CheckResult>({ kind: 'check', ...request });
  }

  private ask<T>(request: object): Promise<T> {
    const child = this.start();
    const id = this.nextId++;
    return new Promise<T>((resolve) => {
      this.waiting.set(id, { resolve: resolve as (result: unknown) => void });
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
        const spawnError = `lanes' process helper ${why}`;
        w.resolve({ exitCode: null, stdout: '', stderr: '', timedOut: false, tail: spawnError, spawnError });
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
      const answer = JSON.parse(line) as { id: number };
      const w = this.waiting.get(answer.id);
      if (!w) continue;
      this.waiting.delete(answer.id);
      if (this.waiting.size === 0) this.hold(false);
      w.resolve(answer);
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

/** The process-wide helper, or null when git should run in-process (LANES_PROCESS_HELPER=0, or it failed). */
export function processHelper(): GitHelper | null {
  if (process.env.LANES_PROCESS_HELPER === '0') return null;
  shared ??= new GitHelper();
  return shared.failed ? null : shared;
}
