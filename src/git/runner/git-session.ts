import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { afterTurn } from '../../process/thread-share.js';
import { BASE_ARGS, GIT_ENV } from './git.js';

// One long-lived git process that answers requests over its stdin and stdout
// (`cat-file --batch`, `update-ref --stdin`, `hash-object --stdin-paths`): started once per
// repository, so a read or a ref update costs a pipe round trip instead of a fork
// (docs/DECISIONS.md "Git speed"). A session takes either `request`s, each written when the
// one before has its answer, or `ask`s, written at once and answered in turn (pipelined);
// never both (their answers would cross). When git exits (a failed transaction ends
// `update-ref --stdin`, a bad entry ends `mktree`), what was waiting for it fails
// (SessionClosed) and the next request starts a new process. While idle the process does
// not keep lanes alive.

export class SessionClosed extends Error {
  constructor(
    readonly command: string,
    readonly stderr: string,
  ) {
    super(`git ${command} ended: ${stderr.trim() || 'no message'}`);
  }
}

/** Reads lines and byte counts from a stream as they arrive. */
export class StreamReader {
  private chunks: Buffer[] = [];
  private length = 0;
  private waiter: (() => void) | null = null;
  private ended = false;

  get done(): boolean {
    return this.ended;
  }

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.length += chunk.length;
    this.wake();
  }

  end(): void {
    this.ended = true;
    this.wake();
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = null;
    w?.();
  }

  private joined(): Buffer {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0] ?? Buffer.alloc(0);
  }

  private take(n: number): Buffer {
    const all = this.joined();
    const out = all.subarray(0, n);
    const rest = all.subarray(n);
    this.chunks = rest.length ? [rest] : [];
    this.length = rest.length;
    return out;
  }

  private async waitFor(ready: () => boolean): Promise<void> {
    while (!ready()) {
      if (this.ended) throw new Error('stream ended');
      await new Promise<void>((resolve) => (this.waiter = resolve));
    }
  }

  /** One line without its newline. */
  async line(): Promise<string> {
    let at = -1;
    await this.waitFor(() => (at = this.joined().indexOf(10)) >= 0);
    return this.take(at + 1)
      .subarray(0, at)
      .toString('utf8');
  }

  async bytes(n: number): Promise<Buffer> {
    await this.waitFor(() => this.length >= n);
    return Buffer.from(this.take(n));
  }
}

/** Pipes to a child are sockets: they can stop holding the event loop open. */
function socket(stream: unknown): { ref?: () => void; unref?: () => void } {
  return stream as { ref?: () => void; unref?: () => void };
}

export class GitSession {
  private child: ChildProcessWithoutNullStreams | null = null;
  private reader = new StreamReader();
  private stderr = '';
  private stderrEnded: Promise<void> = Promise.resolve();
  private queue: Promise<unknown> = Promise.resolve();
  private pending = 0;
  /** The stdin whose writes wait for the end of this turn (write). */
  private corked: NodeJS.WritableStream | null = null;

  constructor(
    private readonly cwd: string,
    private readonly args: readonly string[],
  ) {}

  /**
   * Runs one request: `talk` writes to git and reads its answer; requests never interleave.
   * The caller takes the answer in a turn of the coordinator's thread, as from git() (git.ts).
   */
  request<T>(talk: (write: (text: string) => void, read: StreamReader) => Promise<T>): Promise<T> {
    this.pending++;
    return afterTurn(
      this.inTurn(() => {
        const child = this.start();
        return talk((text) => this.write(child, text), this.reader);
      }),
    );
  }

  /**
   * A request written at once, its answer read in turn: requests from everywhere in lanes
   * (every lane's jobs and the tick) are pipelined instead of waiting for each other's round
   * trip. For a git that answers every request in order (`cat-file --batch-command`,
   * `hash-object --stdin-paths`, `mktree --batch`); an answer is read only from the process
   * the request went to: if that one ended (a bad request ends `mktree`), every request
   * written to it fails with SessionClosed, and `retry` repeats a request that is safe to
   * repeat once, in a new process. The caller takes the answer in a turn, as from request().
   */
  ask<T>(text: string, answer: (read: StreamReader) => Promise<T>, retry = false): Promise<T> {
    if (retry)
      return this.ask(text, answer).catch((error: unknown) => {
        if (!(error instanceof SessionClosed)) throw error;
        return this.ask(text, answer);
      });
    this.pending++;
    const child = this.start();
    const reader = this.reader;
    this.write(child, text);
    return afterTurn(this.inTurn(() => answer(reader)));
  }

  /**
   * Requests written in one pass of the event loop (a tick's reads for every lane, say, or
   * the reads of several lanes' jobs whose answers came in the same pass) go to git in one
   * write: each pipe write wakes git, and those wake-ups were the session's largest cost on
   * the main thread. (Flushed by setImmediate, not nextTick: the I/O callbacks of the same
   * pass add to the write; 1,568 → 1,398 socket writes on the bench's 60-child batch.)
   */
  private write(child: ChildProcessWithoutNullStreams, text: string): void {
    const stdin = child.stdin;
    if (this.corked !== stdin) {
      this.corked = stdin;
      stdin.cork();
      setImmediate(() => {
        if (this.corked === stdin) this.corked = null;
        stdin.uncork();
      });
    }
    stdin.write(text);
  }

  /** Runs `step` after every request before it; a read of an ended process is SessionClosed. */
  private inTurn<T>(step: () => Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      try {
        return await step();
      } catch (error) {
        if (error instanceof Error && error.message === 'stream ended') {
          // (git's stdout ends before its stderr is read: its last words are why it ended)
          await Promise.race([this.stderrEnded, new Promise((resolve) => setTimeout(resolve, 500))]);
          throw new SessionClosed(this.args[0] ?? '', this.stderr);
        }
        throw error;
      } finally {
        if (--this.pending === 0) this.idle();
      }
    };
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => {});
    return result;
  }

  /** Starts git before the first request; nothing asked, it does not hold lanes' event loop open. */
  warm(): void {
    this.start();
    if (this.pending === 0) this.idle();
  }

  private start(): ChildProcessWithoutNullStreams {
    if (this.child && !this.reader.done) {
      this.busy(this.child);
      return this.child;
    }
    const child = spawn('git', [...BASE_ARGS, ...this.args], {
      cwd: this.cwd,
      env: { ...process.env, ...GIT_ENV },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const reader = new StreamReader();
    this.reader = reader;
    this.stderr = '';
    child.stdout.on('data', (chunk: Buffer) => reader.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => (this.stderr = (this.stderr + chunk.toString()).slice(-4000)));
    this.stderrEnded = new Promise((resolve) => child.stderr.once('close', () => resolve()));
    child.stdout.on('end', () => reader.end());
    child.stdin.on('error', () => {}); // git ended first: its exit says why
    const forget = () => {
      reader.end();
      if (this.child === child) this.child = null;
    };
    child.on('exit', forget);
    child.on('error', forget);
    this.child = child;
    return child;
  }

  private busy(child: ChildProcessWithoutNullStreams): void {
    child.ref();
    socket(child.stdout).ref?.();
  }

  /** Nothing asked: git waits on its stdin without holding lanes' event loop open. */
  private idle(): void {
    const child = this.child;
    if (!child) return;
    child.unref();
    for (const stream of [child.stdout, child.stderr, child.stdin]) socket(stream).unref?.();
  }

  close(): void {
    this.child?.stdin.end();
    this.child = null;
  }
}
