export interface MachineClient {
  readonly name: string; // the machine's name from the config
  readonly root: string; // its resolved absolute root (from `hello`)
  /** One side op; throws LanesError code 'machine_unreachable' when the machine does not answer. */
  call<T>(op: string, args: unknown): Promise<T>;
  /** The argv that runs `remote` (an argv, quoted for the remote shell here) on the machine
   *  through the shared connection; `tty` adds -t (for the attach pane). */
  sshArgv(remote: readonly string[], options?: { tty?: boolean }): string[];
}
