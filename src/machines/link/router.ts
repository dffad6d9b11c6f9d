import type { RemoteMachine } from './remote-machine.js';

// Which machine holds a lane: a lane path says it itself (`<root>/lanes/<machine>/…` of a
// connected machine); a lane branch by the record's children (their `machine`), or by the
// lane the steward made for it. Anything no machine holds is the coordinator's: the local
// adapters answer it, exactly as without machines.

export class MachineRouter {
  private readonly branches = new Map<string, string>();

  constructor(
    readonly machines: ReadonlyMap<string, RemoteMachine>,
    /** The machine the record's child of this lane branch is on (absent: local); set once there is a record. */
    public recordMachineOf: (branch: string) => string | undefined = () => undefined,
  ) {}

  get any(): boolean {
    return this.machines.size > 0;
  }

  byPath(path: string): RemoteMachine | null {
    for (const machine of this.machines.values()) if (machine.holdsPath(path)) return machine;
    return null;
  }

  byBranch(branch: string): RemoteMachine | null {
    if (!branch.startsWith('lane/')) return null;
    const name = this.branches.get(branch) ?? this.recordMachineOf(branch);
    return name === undefined || name === 'local' ? null : (this.machines.get(name) ?? null);
  }

  /** The steward made `branch`'s lane on `machine`. */
  noteBranch(branch: string, machine: RemoteMachine | null): void {
    if (machine) this.branches.set(branch, machine.name);
    else this.branches.delete(branch);
  }
}
