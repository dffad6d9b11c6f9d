import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { LanesError } from '../../core/basics/errors.js';
import { runSsh, SSH_FAILED, type SshResult } from './ssh-process.js';
import { shellLine } from './shell-quote.js';

// The one connection to a machine that every lane on it shares: an ssh ControlMaster lanes
// starts and owns (a child process, `-N`), and every command a session multiplexed over
// its control socket. Commands never start a master of their own (ControlMaster=no): a
// master lanes did not start would hold the socket without the forwarded hook sockets.
// When the master has gone (the network dropped, the machine rebooted) the next command
// starts it again, with backoff, until `retryForMs` (seconds, not machine_timeout: a tick
// must not wait for one machine while lanes elsewhere could go on); then
// 'machine_unreachable', and the master is made again in the background until it answers.

export interface SshTarget {
  /** The machine's name in the config. */
  name: string;
  /** A destination as ssh(1) takes it. */
  destination: string;
  /** The argv prefix that runs OpenSSH (`ssh_command`). */
  sshCommand: readonly string[];
  /** The control socket's path (its folder is made 0700). */
  controlPath: string;
}

export type ConnectionState = 'connected' | 'reconnecting' | 'closed';

const BACKOFF_MS = [100, 250, 500, 1000, 2000, 4000];
/** A machine whose address answers nothing (not even a refusal) fails in seconds, not TCP's minutes. */
const CONNECT_TIMEOUT = ['-o', 'ConnectTimeout=10'];

export class SshConnection {
  private master: ChildProcess | null = null;
  private starting: Promise<void> | null = null;
  private readonly forwards = new Set<string>();
  /** When the machine stopped answering (ms since the epoch), or null while it answers. */
  unreachableSince: number | null = null;
  lastError = '';
  closed = false;

  constructor(
    readonly target: SshTarget,
    /** How long a command is tried again while the machine does not answer. */
    public retryForMs: number,
  ) {}

  /** ssh's options of every command on this connection, before the destination. */
  private options(shared = true): string[] {
    const path = shared ? this.target.controlPath : 'none';
    return [
      ...['-o', 'BatchMode=yes', '-o', 'ControlMaster=no', '-o', `ControlPath=${path}`],
      ...CONNECT_TIMEOUT,
    ];
  }

  /**
   * The argv of `ssh … <destination> -- <line>` through the shared connection (`shared`
   * false: a connection of its own, for a synchronous read while the shared one is down).
   */
  argvForLine(line: string, options: { tty?: boolean; shared?: boolean } = {}): string[] {
    const [program, ...rest] = this.target.sshCommand;
    return [
      program!,
      ...rest,
      ...this.options(options.shared ?? true),
      ...(options.tty ? ['-t'] : []),
      this.target.destination,
      '--',
      line,
    ];
  }

  argv(remote: readonly string[], options: { tty?: boolean } = {}): string[] {
    return this.argvForLine(shellLine(remote), options);
  }

  /**
   * The shell command GIT_SSH_COMMAND holds for git to reach the machine through this
   * connection (git appends the destination and its own command, already quoted).
   */
  gitSshCommand(): string {
    return shellLine([...this.target.sshCommand, ...this.options()]);
  }

  get state(): ConnectionState {
    if (this.closed) return 'closed';
    return this.unreachableSince === null ? 'connected' : 'reconnecting';
  }

  /** Runs one remote command line; a dropped connection is retried (the command is safe to run twice). */
  async run(line: string, input?: string | Buffer): Promise<SshResult> {
    return this.retrying(() => runSsh(this.argvForLine(line), { input }));
  }

  /** Runs `attempt` (a process through the connection) again while ssh itself fails. */
  async retrying(attempt: () => Promise<SshResult>): Promise<SshResult> {
    let tries = 0;
    for (;;) {
      if (this.closed) throw new LanesError('machine_unreachable', `machine ${this.target.name}: closed`, 1);
      try {
        await this.ensureMaster();
        const result = await attempt();
        // (255 is ssh's own failure: the connection went, even when the master's end is not heard yet)
        if (result.exitCode !== SSH_FAILED) {
          this.unreachableSince = null;
          return result;
        }
        this.lastError = result.stderr.trim();
      } catch (error) {
        this.lastError = error instanceof Error ? error.message : String(error);
      }
      this.unreachableSince ??= Date.now();
      if (Date.now() - this.unreachableSince >= this.retryForMs) {
        this.away();
        throw new LanesError(
          'machine_unreachable',
          `machine ${this.target.name} (${this.target.destination}) does not answer: ${this.lastError}`,
          1,
        );
      }
      await new Promise((resolve) =>
        setTimeout(resolve, BACKOFF_MS[Math.min(tries++, BACKOFF_MS.length - 1)]),
      );
    }
  }

  private reconnecting = false;

  /**
   * The machine does not answer (an op gave up on it): it is reconnecting from now, and its
   * master is made again in the background (a master that still runs but does not carry
   * commands is ended first, by its pid: lanes started it).
   */
  away(): void {
    this.unreachableSince ??= Date.now();
    if (this.closed || this.reconnecting) return;
    const master = this.master;
    this.master = null; // (its exit is no drop of its own now)
    if (master && master.exitCode === null && master.signalCode === null) master.kill('SIGTERM');
    this.dropped();
  }

  private dropped(): void {
    this.unreachableSince ??= Date.now();
    rmSync(this.target.controlPath, { force: true });
    if (this.reconnecting) return;
    this.reconnecting = true;
    void (async () => {
      for (let tries = 0; !this.closed && this.unreachableSince !== null; tries++) {
        try {
          await this.ensureMaster();
          this.unreachableSince = null;
        } catch (error) {
          this.lastError = error instanceof Error ? error.message : String(error);
          await pause(BACKOFF_MS[Math.min(tries, BACKOFF_MS.length - 1)]!, true);
        }
      }
      this.reconnecting = false;
    })();
  }

  private masterAlive(): boolean {
    return this.master !== null && this.master.exitCode === null && this.master.signalCode === null;
  }

  /** The master, started when it is not running; resolves once its control socket answers. */
  async ensureMaster(): Promise<void> {
    if (this.masterAlive() && existsSync(this.target.controlPath)) return;
    this.starting ??= this.startMaster().finally(() => {
      this.starting = null;
    });
    return this.starting;
  }

  private async startMaster(): Promise<void> {
    const path = this.target.controlPath;
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    // A master left by a coordinator that was killed holds the socket: end it, ours replaces it.
    if (existsSync(path)) {
      await runSsh([...this.argvPrefix(), '-O', 'exit', this.target.destination]);
      rmSync(path, { force: true });
    }
    const [program, ...rest] = this.target.sshCommand;
    const child = spawn(
      program!,
      [
        ...rest,
        '-N',
        '-o',
        'BatchMode=yes',
        '-o',
        'ControlMaster=yes',
        '-o',
        `ControlPath=${path}`,
        '-o',
        'ControlPersist=no',
        '-o',
        'ServerAliveInterval=5',
        '-o',
        'ServerAliveCountMax=3',
        '-o',
        'ExitOnForwardFailure=yes',
        ...CONNECT_TIMEOUT,
        this.target.destination,
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    this.master = child;
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      if (stderr.length < 4096) stderr += chunk;
    });
    child.once('exit', () => {
      // (dropped while lanes used it: it is reconnecting from now, and is made again in the background)
      if (!this.closed && this.master === child && existsSync(path)) this.dropped();
    });
    const exited = new Promise<never>((_, reject) =>
      child.once('exit', (code, signal) =>
        reject(new Error(stderr.trim() || `ssh ended (${code ?? signal}) before it connected`)),
      ),
    );
    exited.catch(() => undefined);
    child.once('error', () => undefined);
    // (the wait ends with the master too: no poll is left behind a machine that refused)
    const ended = () => child.exitCode !== null || child.signalCode !== null;
    await Promise.race([exited, waitFor(() => existsSync(path) || ended(), 30_000)]);
    if (!existsSync(path)) await exited;
    for (const forward of this.forwards) await this.requestForward(forward);
  }

  private argvPrefix(): string[] {
    const [program, ...rest] = this.target.sshCommand;
    return [program!, ...rest, '-o', 'BatchMode=yes', '-o', `ControlPath=${this.target.controlPath}`];
  }

  /** `ssh -R remote:local` on the master, kept over reconnects (the hook sockets). */
  async forward(spec: string): Promise<void> {
    this.forwards.add(spec);
    await this.ensureMaster();
    await this.requestForward(spec);
  }

  private async requestForward(spec: string): Promise<void> {
    const r = await runSsh([...this.argvPrefix(), '-O', 'forward', '-R', spec, this.target.destination]);
    if (r.exitCode !== 0)
      throw new LanesError(
        'machine_unreachable',
        `machine ${this.target.name}: -R ${spec}: ${r.stderr.trim()}`,
        1,
      );
  }

  async cancelForward(spec: string): Promise<void> {
    this.forwards.delete(spec);
    if (!this.masterAlive()) return;
    await runSsh([...this.argvPrefix(), '-O', 'cancel', '-R', spec, this.target.destination]);
  }

  /** Ends the master (by its pid, the one lanes started) and with it the connection. */
  async close(): Promise<void> {
    this.closed = true;
    const child = this.master;
    this.master = null;
    if (child && child.exitCode === null && child.signalCode === null) {
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      await gone;
    }
    rmSync(this.target.controlPath, { force: true });
  }

  /** The master's pid (tests drop the connection by killing it). */
  get masterPid(): number | undefined {
    return this.masterAlive() ? this.master?.pid : undefined;
  }
}

/** `background`: the wait does not keep lanes running by itself. */
function pause(ms: number, background = false): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    if (background) timer.unref();
  });
}

async function waitFor(probe: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`no control socket after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
