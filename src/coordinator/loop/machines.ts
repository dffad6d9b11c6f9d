import type { StewardMachines } from '../lanes/steward.js';
import type { AttemptMachines } from '../executors/launch/index.js';

// The machines of a batch as the loop needs them (the link's pool, src/machines/link): the
// pool for placement, and which machines do not answer (their lanes are left as they are)
// or are lost (their lanes park), handed to every tick.

export interface CoordinatorMachines extends StewardMachines, AttemptMachines {
  /** The pool in config order, without the machines left out at the start. */
  readonly slots: readonly { name: string; slots: number }[];
  /** Machines that do not answer now (reconnecting). */
  unreachable(): string[];
  /** Machines gone longer than machine_timeout. */
  lost(): string[];
  /** Calls `wake` whenever a machine stops or starts answering, or is lost (a tick is due); the stop. */
  watch?(wake: () => void): () => void;
}

/** The tick's machines (TickInput.machines …): nothing without a pool. */
export function machineInput(machines: CoordinatorMachines | undefined) {
  if (!machines) return {};
  return {
    machines: machines.slots,
    unreachableMachines: machines.unreachable(),
    lostMachines: machines.lost(),
  };
}
