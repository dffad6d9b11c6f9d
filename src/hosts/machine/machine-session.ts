import { closeSync, constants, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { constants as os } from 'node:os';
import type { MachineClient } from '../../machines/link/machine-client.js';
import type { SessionState } from '../../machines/protocol.js';
import { lineRenderer } from '../headless-host.js';
import type { ExitInfo, LaneSession, LaunchSpec } from '../host.js';
import { OutputListeners } from '../output-listeners.js';
import { Transcript } from '../transcript.js';
import type { AttachPane } from './attach-pane.js';
import { readRemoteText, RemoteLog } from './remote-log.js';
import { writeLocalStatus } from './remote-run.js';
import type { RemoteFiles } from './remote-run.js';

// One executor in a tmux session on a machine, as the coordinator sees it. Its host's poll
// (one `session.list` a machine for all its sessions) hands each session its state; between
// two, the session brings back what its transcript on the machine grew by, into the local
// transcript (rendered, for a headless agent) and to its output listeners. When the session
// has ended, the rest of the transcript and the exit status come back into the local
// logPath and statusPath, where the coordinator reads them, before `exited` resolves.

/** What of its output a pane draws once the session has ended: a screenful many times over. */
const LAST_OUTPUT_CHARS = 64 * 1024;

/** A quiet session's transcript is read every this many polls at the least often. */
const QUIET_READ_POLLS = 8;

export type KillSignal = 'SIGTERM' | 'SIGKILL' | 'SIGINT' | 'SIGHUP';
const KILL_SIGNALS: readonly string[] = ['SIGTERM', 'SIGKILL', 'SIGINT', 'SIGHUP'];

export interface SessionLink {
  client: MachineClient;
  /** Ends the session on the machine (`session.kill`), then polls. */
  kill(name: string, signal: KillSignal): void;
}

export class MachineSession implements LaneSession {
  readonly host = 'machine';
  readonly taskId: string;
  /** The tmux session's name: what the kernel records, and reattach finds it by. */
  readonly paneId: string;
  /** (the wrapper runs on the machine: no pid of this one's) */
  readonly pid = null;
  readonly exited: Promise<ExitInfo>;
  private resolveExit: (exit: ExitInfo) => void = () => {};
  private ended = false;
  private detached = false;
  private readonly listeners = new OutputListeners();
  private readonly transcript: Transcript;
  private readonly render: ReturnType<typeof lineRenderer> | null;
  private readonly log: RemoteLog;
  /** A `\r` at the end of a read, held until the next shows whether `\n` follows. */
  private heldCr = false;
  private readEvery = 1;
  private pollsSinceRead = 0;
  /** With a pane: the last of what it printed, drawn in the pane once it has ended. */
  private lastOutput = '';
  /** The signal lanes sent it: how it ended when it left no status (the wrapper went with it). */
  private killedWith: KillSignal | null = null;

  constructor(
    private readonly link: SessionLink,
    name: string,
    private readonly spec: LaunchSpec,
    private readonly files: RemoteFiles,
    private readonly pane: AttachPane | null,
    /** A session found again after a restart: the local transcript is written again from its start. */
    again: boolean,
  ) {
    this.taskId = spec.taskId;
    this.paneId = name;
    this.exited = new Promise((resolve) => (this.resolveExit = resolve));
    if (again) emptyFile(spec.logPath);
    // (with a pane, its screen keeps the recent lines, as a local pty's does)
    this.transcript = new Transcript(spec.logPath, pane === null);
    this.render = spec.renderLine ? lineRenderer(spec.renderLine) : null;
    this.log = new RemoteLog(link.client, files.log);
  }

  get running(): boolean {
    return !this.ended;
  }

  get screen() {
    return this.pane?.screen;
  }

  onOutput(listener: (chunk: string) => void): () => void {
    return this.listeners.add(listener);
  }

  /** Keystrokes into the pane (headless: the executor gets no input, as a local headless one). */
  write(data: string): void {
    if (!this.ended) this.pane?.write(data);
  }

  resize(cols: number, rows: number): void {
    this.pane?.resize(cols, rows);
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    if (this.ended) return;
    const sent = KILL_SIGNALS.includes(signal) ? (signal as KillSignal) : 'SIGTERM';
    this.killedWith = sent;
    this.link.kill(this.paneId, sent);
  }

  recentLines(count: number): string[] {
    return this.pane ? this.pane.screen.tail(count) : this.transcript.recent(count);
  }

  /**
   * The poll's news of this session (`state` null: the machine lists it no more). Throws when
   * the machine does not answer: the next poll tries again from where this one was.
   */
  async update(state: SessionState | null): Promise<void> {
    if (this.ended || this.detached) return;
    if (state?.running) return this.readWhileRunning();
    const status = await readRemoteText(this.link.client, this.files.status);
    this.take(await this.log.readNew()); // (what it printed last, after the read above)
    if (this.detached) return;
    this.ended = true;
    const exit = this.bringBackStatus(status, state?.exit ?? null);
    this.take(this.log.end(), true);
    this.transcript.close();
    if (this.pane) {
      await this.pane.stop(); // (the attach has ended with the session, or is ended now)
      // tmux leaves an empty screen and "[exited]" behind: the pane shows the executor's last instead
      await this.pane.show(this.lastOutput);
    }
    this.resolveExit(exit);
  }

  /**
   * Each read is a process on the machine: a session that printed nothing is read less and
   * less often (every poll, up to every QUIET_READ_POLLS), and every poll again once it prints.
   */
  private async readWhileRunning(): Promise<void> {
    if (++this.pollsSinceRead < this.readEvery) return;
    this.pollsSinceRead = 0;
    const text = await this.log.readNew();
    this.readEvery = text === '' ? Math.min(this.readEvery * 2, QUIET_READ_POLLS) : 1;
    this.take(text);
  }

  /** Stops following (lanes exits): the session goes on on the machine, `exited` stays open. */
  async detach(): Promise<void> {
    this.detached = true;
    this.transcript.close();
    await this.pane?.stop();
  }

  /** The exit into the local status file (as the wrapper would have written it here). */
  private bringBackStatus(remote: string | null, listed: SessionState['exit']): ExitInfo {
    mkdirSync(dirname(this.spec.statusPath), { recursive: true });
    if (remote !== null && /^\d+\n$/.test(remote)) {
      writeLocalStatus(this.spec.statusPath, remote);
      return { code: Number(remote.trimEnd()), signal: null };
    }
    // (ended and left no status: killed with its wrapper, by lanes or by someone else)
    if (listed === null) return { code: null, signal: this.killedWith ?? 'lost' };
    const number = listed.signal ? os.signals[listed.signal as NodeJS.Signals] : undefined;
    const code = listed.code ?? (number !== undefined ? 128 + number : null);
    if (code !== null) writeLocalStatus(this.spec.statusPath, `${code}\n`);
    return listed;
  }

  private take(text: string, last = false): void {
    let chunk = text;
    if (!this.pane) {
      // Headless: the tmux pty turned each `\n` into `\r\n`; the transcript is a pipe's.
      chunk = (this.heldCr ? '\r' : '') + chunk;
      this.heldCr = !last && chunk.endsWith('\r');
      if (this.heldCr) chunk = chunk.slice(0, -1);
      chunk = chunk.replace(/\r\n/g, '\n');
    }
    if (this.pane) this.lastOutput = (this.lastOutput + chunk).slice(-LAST_OUTPUT_CHARS);
    if (chunk !== '') {
      this.transcript.add(this.render ? this.render.add(chunk) : chunk);
      this.listeners.emit(chunk);
    }
    if (last && this.render) this.transcript.add(this.render.flush());
  }
}

function emptyFile(path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const { O_WRONLY, O_CREAT, O_TRUNC, O_NOFOLLOW } = constants;
  closeSync(openSync(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0o644));
}
