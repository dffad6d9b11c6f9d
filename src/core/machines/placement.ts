import type { MachineSlots } from './machines.js';

// Which child starts on which machine (docs/DECISIONS.md, "Machines: placement"). Pure:
// given the children ready to start (in the order they should start), the machines with
// their slots, the lanes each already runs, max_parallel and the pins, it decides. The rules:
//   - a machine never runs more lanes than its slots, the batch never more than max_parallel;
//   - an unpinned child goes to the least loaded machine (the smallest share of its slots
//     in use), ties to the first in config order;
//   - a pinned child (the plan's `machine:`, or the machine its lane already is on: a rework
//     or a move stays where it is sent) goes there or waits; it is never placed elsewhere,
//     and while it waits the children after it may still start;
//   - a machine that is unavailable (reconnecting, lost, left out) gets nothing.

export interface ReadyChild {
  readonly task_id: string;
  /** The one machine this child may start on; absent: any. */
  readonly pin?: string;
}

export interface PlacementInput {
  readonly ready: readonly ReadyChild[];
  /** The pool, in config order. */
  readonly machines: readonly MachineSlots[];
  /** Lanes each machine runs now (a machine not named runs none). */
  readonly running: ReadonlyMap<string, number>;
  readonly maxParallel: number;
  /** Machines that get nothing: reconnecting, lost, left out. */
  readonly unavailable: ReadonlySet<string>;
}

export interface Placement {
  readonly task_id: string;
  readonly machine: string;
}

export function placeChildren(input: PlacementInput): Placement[] {
  const load = new Map(input.machines.map((m) => [m.name, input.running.get(m.name) ?? 0]));
  let free = input.maxParallel - [...input.running.values()].reduce((a, b) => a + b, 0);
  const out: Placement[] = [];
  for (const child of input.ready) {
    if (free <= 0) break;
    const machine = pick(input, load, child.pin);
    if (machine === null) continue; // (its machine is full or away: it waits)
    out.push({ task_id: child.task_id, machine });
    load.set(machine, load.get(machine)! + 1);
    free--;
  }
  return out;
}

/** The least loaded machine with a free slot that may take the child, or null. */
function pick(
  input: PlacementInput,
  load: ReadonlyMap<string, number>,
  pin: string | undefined,
): string | null {
  let best: MachineSlots | null = null;
  for (const m of input.machines) {
    if (pin !== undefined && m.name !== pin) continue;
    if (input.unavailable.has(m.name) || load.get(m.name)! >= m.slots) continue;
    // a/b < c/d without fractions: the share of slots in use
    if (best === null || load.get(m.name)! * best.slots < load.get(best.name)! * m.slots) best = m;
  }
  return best?.name ?? null;
}

/**
 * Why `machine` may not take a lane of this child now (null: it may): a lane offered from a
 * machine is admitted only where placement could have put it.
 */
export function machineRefusal(
  machine: string,
  pin: string | undefined,
  input: Omit<PlacementInput, 'ready' | 'maxParallel'>,
): string | null {
  const m = input.machines.find((x) => x.name === machine);
  if (!m) return `machine "${machine}" is not in the batch's pool`;
  if (pin !== undefined && pin !== machine) return `the child runs on machine "${pin}", not "${machine}"`;
  if (input.unavailable.has(machine)) return `machine "${machine}" is not available`;
  if ((input.running.get(machine) ?? 0) >= m.slots) return `machine "${machine}" has no free slot`;
  return null;
}
