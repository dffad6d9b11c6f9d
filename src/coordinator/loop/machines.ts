import { isLanesError } from '../../core/basics/errors.js';
import type { TickPorts } from '../../core/ports/tick-ports.js';
import type { Report } from '../../core/records/report.js';
import { tick } from '../../core/tick/tick.js';
import type { TickInput } from '../../core/tick/tick-input.js';
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

/** How many times one tick is run again because a machine stopped answering in it. */
const AWAY_TRIES = 8;

/**
 * Runs a tick; when a machine stops answering in it (machine_unreachable: the link gave up
 * after seconds and the pool has it reconnecting now, or lost), the tick is run again with
 * the machines as they are now, so that it leaves that machine's lanes and the lanes
 * elsewhere go on. The same input otherwise: its exits and turn ends are not lost.
 */
export async function tickThroughAway(
  machines: CoordinatorMachines | undefined,
  ports: TickPorts,
  input: TickInput,
): Promise<Report> {
  for (let tries = 1; ; tries++) {
    try {
      return await tick(ports, input);
    } catch (error) {
      if (!machines || !isLanesError(error) || error.code !== 'machine_unreachable' || tries >= AWAY_TRIES)
        throw error;
      input = { ...input, ...machineInput(machines) };
      // (told of no change: the machine answered again meanwhile, or is not yet marked; a breath)
      await new Promise((resolve) => setTimeout(resolve, 100 * tries));
    }
  }
}
