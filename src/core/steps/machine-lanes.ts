import { machineLostReason, machineOf } from '../machines/machines.js';
import type { MachinePool } from '../machines/machines.js';
import type { MachineSlots } from '../machines/machines.js';
import { IN_FLIGHT_STATES } from '../records/record.js';
import { isStartable } from '../records/transitions.js';
import { pinOf } from './schedule.js';
import type { TickContext } from './tick-context.js';

// What a tick makes of machines that do not answer (docs/DECISIONS.md, "Machines:
// placement"). A machine that is reconnecting changes nothing: its lanes are not looked at
// (TickContext.away). A machine gone longer than machine_timeout is lost: its lanes in
// flight park `machine_lost: <name>`, with the ways on of any parked lane (resume once it
// is back, drop) and one more, `lanes resume --approve --move <child>=<machine>`.

/** The pool of a tick's input, or null without machines (every lane local, as before). */
export function machinePool(input: {
  machines?: readonly MachineSlots[];
  unreachableMachines?: readonly string[];
  lostMachines?: readonly string[];
}): MachinePool | null {
  if (input.machines === undefined) return null;
  return {
    machines: input.machines,
    unreachable: new Set(input.unreachableMachines ?? []),
    lost: new Set(input.lostMachines ?? []),
  };
}

/** The reason a child pinned to a machine that is not in the batch's pool parks with. */
export function machineLeftOutReason(machine: string): string {
  return `machine_left_out: ${machine}`;
}

/**
 * Parks the lanes in flight on a lost machine, and the children ready to start that are
 * pinned to a lost machine or to one the pool does not have (they could never start). A lane
 * committed already is not parked: its commit was fetched when it was made, and it
 * integrates as any other (integration is local).
 */
export function parkLostLanes(ctx: TickContext): void {
  const pool = ctx.machines;
  if (pool === null) return;
  const names = new Set(pool.machines.map((m) => m.name));
  for (const child of ctx.record.children) {
    const machine = machineOf(child);
    if (IN_FLIGHT_STATES.has(child.state) && child.state !== 'lane_committed' && pool.lost.has(machine)) {
      ctx.park(child.task_id, machineLostReason(machine));
      continue;
    }
    if (!isStartable(ctx.record, ctx.child(child.task_id))) continue;
    const pin = pinOf(ctx.record, ctx.plan, child.task_id);
    if (pin === undefined) continue;
    if (pool.lost.has(pin)) ctx.park(child.task_id, machineLostReason(pin));
    else if (!names.has(pin)) ctx.park(child.task_id, machineLeftOutReason(pin));
  }
}
