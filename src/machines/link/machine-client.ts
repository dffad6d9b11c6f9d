// The one interface between the link (ssh, the op client) and the machine host
// (src/hosts/machine): what a lane on a machine needs of its machine.

export interface MachineClient {
  /** The machine's name from the config. */
  readonly name: string;
  /** Its resolved absolute root (from `hello`). */
  readonly root: string;
  /** One side op; throws LanesError code 'machine_unreachable' when the machine does not answer. */
  call<T>(op: string, args: unknown): Promise<T>;
  /**
   * The argv that runs `remote` (an argv, quoted for the remote shell here) on the machine
   * through the shared connection; `tty` adds -t (for the attach pane).
   */
  sshArgv(remote: readonly string[], options?: { tty?: boolean }): string[];
}
