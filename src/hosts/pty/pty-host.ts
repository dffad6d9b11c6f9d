import { existsSync } from 'node:fs';
import { wrapWithExitStatus } from '../exit-status.js';
import { killGroup } from '../../process/process-group.js';
import { leftoverSweeps } from '../../process/leftover-sweeps.js';
import type { ExitInfo, Host, HostCapabilities, LaneSession, LaunchSpec } from '../host.js';
import type { FromWorker } from './pty-messages.js';
import { ptyThread } from './pty-thread.js';
import { RemoteScreen } from './remote-screen.js';
import type { Screen } from './screen.js';
import { Transcript } from '../transcript.js';
import { OutputListeners } from '../output-listeners.js';

// Executors in pseudo-terminals (node-pty), each with a headless xterm screen model that
// the TUI renders from. The ptys are read and parsed in the pty worker (pty-worker.ts):
// this thread gets every byte (the transcript, the output listeners) and the screens'
// snapshots (remote-screen.ts). Resizing a pane resizes the screen model and the pty together.

export { dropQueuedWritesOnClose, holdsFd } from './pty-fd.js';

export interface PtySession extends LaneSession {
  readonly screen: Screen;
}

/** The exit wrapper waits this long before it exits, so the pty is read to its end. */
const LINGER_SECONDS = 0.05;

const SIGNALS: Record<number, string> = { 1: 'SIGHUP', 2: 'SIGINT', 9: 'SIGKILL', 15: 'SIGTERM' };

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
    const { cols, rows } = this.size;
    const transcript = new Transcript(spec.logPath, false);
    const listeners = new OutputListeners();
    let running = true;
    let pid = 0;
    let screen: RemoteScreen | null = null;
    let spawned: (error?: Error) => void = () => {};
    let resolveExit: (info: ExitInfo) => void = () => {};
    let exitInfo: ExitInfo = { code: null, signal: null };
    let swept: Promise<unknown> = Promise.resolve();
    const exited = new Promise<ExitInfo>((resolve) => (resolveExit = resolve));
    const onMessage = (message: FromWorker): void => {
      switch (message.t) {
        case 'spawned':
          pid = message.pid;
          leftoverSweeps.warm(); // (its exit is swept: the sweep's thread is started by then)
          return spawned();
        case 'failed':
          pane.remove();
          return spawned(new Error(message.message));
        case 'data':
          // Every byte, in the order the worker read them: the transcript at once.
          transcript.add(message.data);
          screen?.noteOutput();
          listeners.emit(message.data);
          return ptyThread.post({ t: 'took', id: pane.id, chars: message.data.length });
        case 'snapshot':
          return screen?.receive(message.snapshot, message.flush);
        case 'ended': {
          // The pty is read to its end; the session ends when the screen has parsed it too.
          running = false;
          // What it left running outside its group is stopped before its exit is told
          // (process/leftovers.ts), with one sweep for the exits of this turn (leftover-sweeps.ts).
          swept = leftoverSweeps.stop(spec.runId);
          transcript.close();
          const { exitCode, signal } = message;
          exitInfo = {
            code: signal || exitCode < 0 ? null : exitCode,
            signal: signal ? (SIGNALS[signal] ?? `SIG${signal}`) : null,
          };
          return;
        }
        case 'exit':
          running = false;
          screen?.end();
          pane.remove();
          return void swept.then(() => resolveExit(exitInfo));
      }
    };
    const pane = ptyThread.add(onMessage);
    const post = ptyThread.post.bind(ptyThread);
    screen = new RemoteScreen(pane.id, cols, rows, post);
    const env = { ...process.env, ...spec.env, TERM: 'xterm-256color' } as Record<string, string>;
    await new Promise<void>((resolve, reject) => {
      spawned = (error) => (error ? reject(error) : resolve());
      post({
        t: 'open',
        id: pane.id,
        file: file as string,
        args,
        cwd: spec.cwd,
        env,
        cols,
        rows,
        scrollback: this.scrollback,
      });
    }).catch((error: unknown) => {
      transcript.close();
      throw error;
    });
    const paneScreen = screen;
    const session: PtySession = {
      taskId: spec.taskId,
      host: this.name,
      pid,
      paneId: null,
      screen: paneScreen,
      exited,
      get running() {
        return running;
      },
      onOutput: (listener) => listeners.add(listener),
      write(data) {
        if (running) post({ t: 'write', id: pane.id, data });
      },
      resize(cols, rows) {
        paneScreen.resize(cols, rows);
      },
      kill(signal = 'SIGHUP') {
        if (running) killGroup(pid, signal);
      },
      recentLines: (count) => paneScreen.tail(count),
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
