import type { MachineClient } from '../../machines/link/machine-client.js';
import { sessionName, TMUX_SOCKET, tmuxSafe } from '../../machines/protocol.js';
import type { SessionState } from '../../machines/protocol.js';
import type { Host, HostCapabilities, LaunchSpec } from '../host.js';
import { AttachPane } from './attach-pane.js';
import { MachineSession } from './machine-session.js';
import type { KillSignal, SessionLink } from './machine-session.js';
import { readRemoteText } from './remote-log.js';
import { isAttemptOf, lanePrefix, remoteFiles, sendLaunch } from './remote-run.js';

// Executors on one machine (issue 25): each attempt a detached tmux session there
// (`session.start`, on the side's `tmux -L lanes`), so it outlives a dropped connection and
// a coordinator crash. One poll a machine (`session.list` of the batch's sessions) tells
// every session of it how it is, and each brings back its transcript meanwhile. In the TUI
// a lane's pane is a local pty attached to its session over the machine's connection.
// Disposing ends what runs here (the poll, the attach ptys), never a session there.

/** How often the machine is asked about its sessions (and their transcripts are read). */
export const POLL_MS = 500;

export interface MachineHostOptions {
  batchId: string;
  /** lanes draws its TUI: the lanes' panes are attach ptys, and agents run interactive. */
  tuiDrawn: boolean;
  size?: { cols: number; rows: number };
  pollMs?: number;
  /** Where trouble is told (a kill the machine did not take). */
  notify?: (text: string) => void;
}

export class MachineHost implements Host {
  readonly name = 'machine';
  readonly capabilities: HostCapabilities;
  private readonly sessions = new Map<string, MachineSession>();
  private readonly link: SessionLink;
  private size: { cols: number; rows: number };
  private timer: NodeJS.Timeout | null = null;
  private cycling: Promise<void> | null = null;
  private again = false;
  private disposed = false;

  constructor(
    readonly client: MachineClient,
    private readonly options: MachineHostOptions,
  ) {
    this.size = options.size ?? { cols: 120, rows: 32 };
    this.capabilities = {
      inAppPane: options.tuiDrawn,
      outlivesLanes: true,
      attachable: true,
      agents: options.tuiDrawn ? 'interactive' : 'headless',
    };
    this.link = { client, kill: (name, signal) => this.killSession(name, signal) };
  }

  async open(spec: LaunchSpec): Promise<MachineSession> {
    const batch = this.options.batchId;
    const files = remoteFiles(this.client, batch, spec);
    const { argv, env } = await sendLaunch(this.client, batch, spec, files);
    const wanted = sessionName(batch, spec.taskId, spec.runId, spec.attempt);
    const { name } = await this.client.call<{ name: string }>('session.start', {
      name: wanted,
      cwd: spec.cwd,
      argv,
      env,
      log: files.log,
      status: files.status,
      batch,
    });
    return this.track(new MachineSession(this.link, name, spec, files, this.paneFor(name), false));
  }

  /** An attempt from before a restart, by its session's name: still there (running or ended), or null (lost). */
  async reattach(spec: LaunchSpec, paneId: string): Promise<MachineSession | null> {
    const files = remoteFiles(this.client, this.options.batchId, spec);
    const states = await this.client.call<SessionState[]>('session.list', { prefix: paneId });
    const state = states.find((s) => s.name === paneId);
    if (!state && (await readRemoteText(this.client, files.status)) === null) return null;
    const pane = state?.running ? this.paneFor(paneId) : null;
    const session = this.track(new MachineSession(this.link, paneId, spec, files, pane, true));
    void this.pollNow();
    return session;
  }

  /** After a lane's release: whatever of its sessions still runs on the machine is ended. */
  async closeLane(taskId: string, _lanePath?: string): Promise<void> {
    const prefix = lanePrefix(this.options.batchId, taskId);
    const states = await this.client.call<SessionState[]>('session.list', { prefix });
    const left = states.filter((s) => s.running && isAttemptOf(s.name, prefix));
    // (no signal: the side ends the session and everything of its pane's group)
    await Promise.all(left.map((s) => this.client.call('session.kill', { name: s.name })));
    if (left.length) await this.pollNow();
  }

  /** New panes open at this size; open ones are resized by their owner. */
  setSize(cols: number, rows: number): void {
    this.size = { cols, rows };
  }

  /** Stops polling and ends the attach ptys; the sessions go on on the machine. */
  async dispose(): Promise<void> {
    this.disposed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.cycling;
    await Promise.all([...this.sessions.values()].map((s) => s.detach()));
    this.sessions.clear();
  }

  /** Resolves after a poll that began after this call. */
  pollNow(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (!this.cycling) return this.cycle();
    this.again = true;
    return this.cycling.then(() => this.cycling ?? undefined);
  }

  private track(session: MachineSession): MachineSession {
    this.sessions.set(session.paneId, session);
    void session.exited.then(() => this.sessions.delete(session.paneId));
    this.schedule();
    return session;
  }

  private paneFor(name: string): AttachPane | null {
    if (!this.options.tuiDrawn) return null;
    // (`=`: that session exactly; tmux would take `-t lanes-b-c-1` for `lanes-b-c-10` once it is gone)
    const target = `=${name}`;
    const argv = this.client.sshArgv(['tmux', '-L', TMUX_SOCKET, 'attach', '-t', target], { tty: true });
    const session = () => this.sessions.get(name);
    return new AttachPane(argv, this.size, async () => {
      await this.pollNow();
      return session()?.running ?? false;
    });
  }

  private schedule(): void {
    if (this.timer || this.cycling || this.disposed || this.sessions.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.cycle();
    }, this.options.pollMs ?? POLL_MS);
  }

  private cycle(): Promise<void> {
    if (this.disposed) return Promise.resolve();
    this.cycling = this.pollOnce().finally(() => {
      this.cycling = null;
      if (this.again) {
        this.again = false;
        void this.cycle();
      } else this.schedule();
    });
    return this.cycling;
  }

  /** One `session.list` for every session of the batch here, then each session's news. */
  private async pollOnce(): Promise<void> {
    if (this.sessions.size === 0) return;
    let states: SessionState[];
    try {
      const prefix = tmuxSafe(`lanes-${this.options.batchId}-`);
      states = await this.client.call<SessionState[]>('session.list', { prefix });
    } catch {
      return; // (the machine does not answer: its sessions stay as they were; the link reconnects)
    }
    const byName = new Map(states.map((s) => [s.name, s]));
    await Promise.all(
      [...this.sessions.values()].map((s) => s.update(byName.get(s.paneId) ?? null).catch(() => {})),
    );
  }

  private killSession(name: string, signal: KillSignal): void {
    this.client
      .call('session.kill', { name, signal })
      .then(() => this.pollNow())
      .catch((error: unknown) =>
        this.options.notify?.(`${name}: the machine ${this.client.name} did not end it (${String(error)})`),
      );
  }
}
