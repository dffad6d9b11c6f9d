import { LOCAL_MACHINE } from '../basics/ids.js';
import type { BatchRecord, ChildRecord } from '../records/record.js';
import { IN_FLIGHT_STATES } from '../records/record.js';

// The machines a batch's lanes run on (docs/DECISIONS.md, "Machines: placement"), as the
// core sees them: names and slots. How lanes reaches a machine (ssh, the side script) is
// the link's business; the core only decides which child starts where, and what becomes
// of the lanes of a machine that does not answer.

/** A machine of the pool, in config order: its name and how many lanes it runs at once. */
export interface MachineSlots {
  readonly name: string;
  readonly slots: number;
}

/**
 * What the confirmation screen and `lanes status` show of a machine: `left out` (its
 * preflight failed, the reason says why), `reconnecting` (it does not answer, its lanes
 * wait in their state), `lost` (gone longer than machine_timeout: its lanes park).
 */
export type MachineState = 'ready' | 'left out' | 'reconnecting' | 'lost';
export const MACHINE_STATES: readonly MachineState[] = ['ready', 'left out', 'reconnecting', 'lost'];

export interface MachineView {
  readonly name: string;
  readonly slots: number;
  readonly state: MachineState;
  readonly reason?: string;
}

/** The machines of a tick: the pool (without those left out) and those not answering. */
export interface MachinePool {
  readonly machines: readonly MachineSlots[];
  /** Not answering now (reconnecting): their lanes are left as they are this tick. */
  readonly unreachable: ReadonlySet<string>;
  /** Gone longer than machine_timeout: their lanes park `machine_lost: <name>`. */
  readonly lost: ReadonlySet<string>;
}

/** The machine a child's lane is on (absent in the record: local). */
export function machineOf(child: Pick<ChildRecord, 'machine'>): string {
  return child.machine ?? LOCAL_MACHINE;
}

/** The lanes each machine runs now: children in flight, by the machine of their lane. */
export function lanesRunning(record: Pick<BatchRecord, 'children'>): Map<string, number> {
  const running = new Map<string, number>();
  for (const child of record.children)
    if (IN_FLIGHT_STATES.has(child.state))
      running.set(machineOf(child), (running.get(machineOf(child)) ?? 0) + 1);
  return running;
}

/** The reason a lane of a lost machine parks with (the ways on read it back: lostMachineOf). */
export function machineLostReason(machine: string): string {
  return `machine_lost: ${machine}`;
}

/** The machine a `machine_lost: <name>` (or `machine_left_out: <name>`) reason names, or null. */
export function lostMachineOf(reason: string | null): string | null {
  const found = /^machine_(?:lost|left_out): ([a-z0-9][a-z0-9-]*)$/.exec(reason ?? '');
  return found ? found[1]! : null;
}

/**
 * With every machine left out at confirmation, the batch cannot run: the message naming
 * each and why (the caller exits 2, nothing written); null while one is ready.
 */
export function noMachineLeft(views: readonly MachineView[]): string | null {
  if (views.length === 0 || views.some((v) => v.state !== 'left out')) return null;
  const each = views.map((v) => `${v.name} (${v.reason ?? 'left out'})`).join(', ');
  return `no machine can run lanes: ${each}`;
}
