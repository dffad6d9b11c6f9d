import { existsSync } from 'node:fs';
import pty from 'node-pty';
import { wrapWithExitStatus } from '../exit-status.js';
import { killGroup } from '../../process/process-group.js';
import { leftoverSweeps } from '../../process/leftover-sweeps.js';
import type { ExitInfo, Host, HostCapabilities, LaneSession, LaunchSpec } from '../host.js';
import { drainAfterExit } from './pty-drain.js';
import { ScreenModel } from './screen.js';
import { Transcript } from '../transcript.js';
import { OutputListeners } from '../output-listeners.js';

// Executors in pseudo-terminals (node-pty), each with a headless xterm screen model that
// the TUI renders from. Resizing a pane resizes the screen model and the pty together.

export interface PtySession extends LaneSession {
  readonly screen: ScreenModel;
}

/** The exit wrapper waits this long before it exits, so the pty is read to its end. */
const LINGER_SECONDS = 0.05;

const SIGNALS: Record<number, string> = { 1: 'SIGHUP', 2: 'SIGINT', 9: 'SIGKILL', 15: 'SIGTERM' };

/**
 * Whether node-pty still holds the pty's file descriptor. Its read socket closes the fd
 * when it ends (EIO once the executor's side is gone), and the exit is reported only when
 * the child is reaped, a little later: in between, an ioctl on the fd fails with EBADF and a
 * write could reach whatever file has reused the number. node-pty 1.1.0 says so only through
 * the socket (lib/unixTerminal.js); `destroyed` is set before the fd is closed.
 */
export function holdsFd(proc: pty.IPty): boolean {
  const socket = (proc as unknown as { _socket?: { destroyed?: unknown } })._socket;
  return socket?.destroyed !== true;
}

/**
 * What was typed into a pane and not written yet (node-pty queues a write the pty cannot
 * take: a paste the executor is not reading) is dropped when the pty closes: node-pty 1.1.0
 * would go on writing it to the closed descriptor, or to a file that reused its number.
 */
export function dropQueuedWritesOnClose(proc: pty.IPty): void {
  const internals = proc as unknown as {
    _socket?: { once?: (event: 'close', listener: () => void) => void };
    _writeStream?: { _writeQueue?: unknown[]; dispose?: () => void };
  };
  internals._socket?.once?.('close', () => {
    const queue = internals._writeStream?._writeQueue;
    if (Array.isArray(queue)) queue.length = 0;
    internals._writeStream?.dispose?.();
  });
}

export class PtyHost implements Host {
  readonly name = 'pty';
  readonly capabilities: HostCapabilities = {
    inAppPane: true,
    outlivesLanes: false,
    attachable: false,
    agents: 'interactive',
  };
  private sessions = new Set<PtySession>();

  constructor(
    private size: { cols: number; rows: number } = { cols: 120, rows: 32 },
    private readonly scrollback?: number,
  ) {}

  async open(spec: LaunchSpec): Promise<PtySession> {
    if (!existsSync(spec.cwd)) throw new Error(`lane ${spec.cwd} does not exist`);
    const [file, ...args] = wrapWithExitStatus(spec.argv, spec.statusPath, LINGER_SECONDS);
    const screen = new ScreenModel(this.size.cols, this.size.rows, this.scrollback);
    const transcript = new Transcript(spec.logPath, false);
    const listeners = new OutputListeners();
    const proc = pty.spawn(file as string, args, {
      name: 'xterm-256color',
      cols: this.size.cols,
      rows: this.size.rows,
      cwd: spec.cwd,
      env: { ...process.env, ...spec.env, TERM: 'xterm-256color' } as Record<string, string>,
    });
    let running = true;
    // The pty is read as fast as the executor writes, never paused: a pty left unread when
    // its executor exits loses output (docs/DECISIONS.md "Pane output"). The transcript gets
    // every byte at once; the screen model queues what it has not parsed yet (bounded).
    drainAfterExit(proc);
    dropQueuedWritesOnClose(proc);
    proc.onData((data) => {
      transcript.add(data);
      void screen.write(data);
      listeners.emit(data);
    });
    const exited = new Promise<ExitInfo>((resolve) => {
      // node-pty reports the exit once the pty is read to its end; the session ends when the
      // screen model has parsed that end too, so its last lines are the executor's last.
      proc.onExit(({ exitCode, signal }) => {
        running = false;
        transcript.close();
        // What it left running outside its group is stopped before its exit is told
        // (process/leftovers.ts), with one sweep for the exits of this turn (leftover-sweeps.ts).
        const swept = leftoverSweeps.stop(spec.runId);
        void Promise.all([swept, screen.flushed()]).then(() =>
          resolve({
            code: signal ? null : exitCode,
            signal: signal ? (SIGNALS[signal] ?? `SIG${signal}`) : null,
          }),
        );
      });
    });
    const session: PtySession = {
      taskId: spec.taskId,
      host: this.name,
      pid: proc.pid,
      paneId: null,
      screen,
      exited,
      get running() {
        return running;
      },
      onOutput: (listener) => listeners.add(listener),
      write(data) {
        if (running && holdsFd(proc)) proc.write(data);
      },
      resize(cols, rows) {
        screen.resize(cols, rows);
        if (running && holdsFd(proc)) proc.resize(cols, rows);
      },
      kill(signal = 'SIGHUP') {
        if (running) killGroup(proc.pid, signal);
      },
      recentLines: (count) => screen.tail(count),
    };
    this.sessions.add(session);
    void exited.then(() => this.sessions.delete(session));
    return session;
  }

  /** New panes open at this size; open ones are resized by their owner. */
  setSize(cols: number, rows: number): void {
    this.size = { cols, rows };
  }

  async dispose(): Promise<void> {
    for (const s of this.sessions) s.kill('SIGHUP');
    await Promise.all([...this.sessions].map((s) => s.exited));
  }
}
