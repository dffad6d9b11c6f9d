import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { HELPER_SOURCE } from './helper-source.js';

// Processes started off lanes' main thread. On Node 20 `spawn()` forks the whole
// coordinator and blocks its event loop until the child has exec'd (~8 ms a process,
// docs/BENCH.md), and the same loop draws the TUI. So every one-shot git process, every
// check and every headless executor is started by a small helper process (a bare `node`
// that runs only helper-source.ts): lanes writes a request line to it and reads the answers,
// and its own loop never waits for a fork (docs/DECISIONS.md "Git speed"). If the helper
// cannot run, they run in-process.

export interface HelperRequest {
  cwd: string;
  argv: readonly string[];
  /** Variables set on top of the environment lanes had when the helper started. */
  env: Record<string, string>;
  input?: string;
  /**
   * Runs only after every serial request sent before it has ended, never beside one: git's
   * worktree bookkeeping (git.ts `isWorktreeBookkeeping`). The helper starts the next one
   * the moment one ends, without a round trip through lanes' loop.
   */
  serial?: boolean;
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

/** A headless executor started by the helper (HeadlessHost): output to `logPath`, bounded. */
export interface ExecRequest {
  cwd: string;
  file: string;
  args: readonly string[];
  /** The whole environment of the process. */
  env: Record<string, string>;
  logPath: string;
  logLimit: number;
  /** At most this much of what it printed comes back in one answer (the tail of it). */
  tailBytes: number;
  /** Output comes back at most this often. */
  notifyMs: number;
  /** `NAME=value` every process of the executor's run carries: those left running at its exit are killed. */
  sweep?: string;
}

export interface ExecEvents {
  started(pid: number): void;
  output(text: string): void;
  exited(code: number | null, signal: string | null, spawnError?: string): void;
}

interface Waiting {
  resolve(result: unknown): void;
  /** Answers before the last one (an executor's start and output): the entry stays. */
  partial?: (answer: Record<string, unknown>) => boolean;
}

export class GitHelper {
  private child: ChildProcess | null = null;
  private readonly waiting = new Map<number, Waiting>();
  private nextId = 0;
  private buffer = '';
  /** Set when the helper could not start: git runs in-process from then on. */
  failed = false;
  /** Set when the helper has started and said so (its node start-up takes 50-100 ms). */
  ready = false;

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

  /** Starts the helper now (it takes a node start-up), so that the first request does not wait for it. */
  warm(): void {
    this.start();
  }

  /** Starts an executor; `events` hear of it until it has exited (or the helper ended: 127). */
  exec(request: ExecRequest, events: ExecEvents): void {
    const partial = (answer: Record<string, unknown>): boolean => {
      if (typeof answer.pid === 'number') events.started(answer.pid);
      else if (typeof answer.output === 'string') events.output(answer.output);
      else return false;
      return true;
    };
    void this.ask<{ exit?: { code: number | null; signal: string | null }; spawnError?: string }>(
      { kind: 'exec', ...request },
      partial,
    ).then((answer) =>
      // (no exit in the answer: the helper ended before the executor did)
      answer.exit
        ? events.exited(answer.exit.code, answer.exit.signal, answer.spawnError)
        : events.exited(127, null, answer.spawnError ?? 'the process helper ended'),
    );
  }

  private ask<T>(request: object, partial?: Waiting['partial']): Promise<T> {
    const child = this.start();
    const id = this.nextId++;
    return new Promise<T>((resolve) => {
      this.waiting.set(id, {
        resolve: resolve as (result: unknown) => void,
        ...(partial ? { partial } : {}),
      });
      if (this.waiting.size === 1) this.hold(true);
      child.stdin?.write(`${JSON.stringify({ id, ...request })}\n`);
    });
  }

  private start(): ChildProcess {
    if (this.child) return this.child;
    const env = { ...process.env };
    delete env.NODE_OPTIONS; // the helper needs none of lanes' loaders or flags
    // In a process group of its own, like the executors it starts: a Ctrl-C in lanes'
    // terminal stops lanes, not the helper (which then ends with lanes' pipe) nor them.
    const child = spawn(process.execPath, ['-e', HELPER_SOURCE], {
      env,
      stdio: ['pipe', 'pipe', 'ignore'],
      detached: true,
    });
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => this.receive(chunk));
    child.stdin?.on('error', () => {});
    const ended = (why: string) => {
      if (this.child !== child) return;
      this.child = null;
      this.ready = false;
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
      let answer: { id: number } & Record<string, unknown>;
      try {
        answer = JSON.parse(line) as { id: number } & Record<string, unknown>;
      } catch {
        continue; // (not an answer: a line the helper's node printed itself; never thrown from a stream)
      }
      if (answer.ready === true) {
        this.ready = true;
        continue;
      }
      const w = this.waiting.get(answer.id);
      if (!w || w.partial?.(answer)) continue;
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
