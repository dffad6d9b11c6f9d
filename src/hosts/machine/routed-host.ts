import type { MachineClient } from '../../machines/link/machine-client.js';
import type { Host, HostCapabilities, LaneSession, LaunchSpec } from '../host.js';

// One host for a batch whose lanes run on several machines: each lane's open, reattach and
// closeLane go to the host of the machine that holds it (`machineOf`: from the record's
// children), the coordinator's own lanes to the local host. The coordinator keeps seeing
// one host.
//
// Its capabilities are the local host's. A remote lane's are its machine host's, and the
// coordinator should read those for that lane (`capabilitiesOf`): its agents run
// `interactive` when the TUI is drawn (its pane is attached to the tmux session) and
// `headless` else — the local host's mode agrees but for Herdr without a TUI (a remote
// lane's agent then runs headless, in its tmux session). So the launch's mode and the quit
// keys of closing a session should come from `capabilitiesOf(task, lanePath).agents`.

/** Finds the machine that holds a lane: null for one of the coordinator's machine. */
export type MachineOf = (taskId: string, lanePath: string) => MachineClient | null;

export class RoutedHost implements Host {
  readonly name: string;
  readonly capabilities: HostCapabilities;
  /** The names of the hosts whose attempts this one finds again after a restart (its machines'). */
  readonly reattaches: readonly string[];
  private readonly machines = new Map<string, Host>();
  /** The last size set: a machine's host made later opens its panes at it too. */
  private size: { cols: number; rows: number } | null = null;

  constructor(
    private readonly local: Host,
    private readonly machineOf: MachineOf,
    /** Makes the host of one machine (a MachineHost), once for each machine a lane is on. */
    private readonly hostOf: (client: MachineClient) => Host,
    /** The host name of a machine host's sessions (MachineHost's `name`). */
    machineHostName = 'machine',
  ) {
    this.name = local.name;
    this.capabilities = local.capabilities;
    this.reattaches = [machineHostName];
  }

  /** What the host of this lane can do (a remote lane's machine host, else the local host). */
  capabilitiesOf(taskId: string, lanePath: string): HostCapabilities {
    return this.hostFor(taskId, lanePath).capabilities;
  }

  open(spec: LaunchSpec): Promise<LaneSession> {
    return this.hostFor(spec.taskId, spec.cwd).open(spec);
  }

  async reattach(spec: LaunchSpec, paneId: string): Promise<LaneSession | null> {
    const host = this.hostFor(spec.taskId, spec.cwd);
    return host.reattach ? host.reattach(spec, paneId) : null;
  }

  async closeLane(taskId: string, lanePath: string): Promise<void> {
    await this.hostFor(taskId, lanePath).closeLane?.(taskId, lanePath);
  }

  /** New panes open at this size (the local host's, when it has sizes, and every machine's). */
  setSize(cols: number, rows: number): void {
    this.size = { cols, rows };
    for (const host of [this.local, ...this.machines.values()])
      (host as { setSize?: (c: number, r: number) => void }).setSize?.(cols, rows);
  }

  /** Disposes every host it made and the local one; sessions on machines go on there. */
  async dispose(): Promise<void> {
    await Promise.all([this.local, ...this.machines.values()].map((h) => h.dispose()));
  }

  private hostFor(taskId: string, lanePath: string): Host {
    const client = this.machineOf(taskId, lanePath);
    if (!client) return this.local;
    let host = this.machines.get(client.name);
    if (!host) {
      host = this.hostOf(client);
      this.machines.set(client.name, host);
      if (this.size)
        (host as { setSize?: (c: number, r: number) => void }).setSize?.(this.size.cols, this.size.rows);
    }
    return host;
  }
}
