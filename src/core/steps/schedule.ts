import type { Plan } from '../plan/plan.js';
import type { BatchRecord } from '../records/record.js';
import { countsAgainstBudget, IN_FLIGHT_STATES } from '../records/record.js';
import { scopesOverlap } from '../plan/scope.js';
import { isStartable } from '../records/transitions.js';
import { LOCAL_MACHINE } from '../basics/ids.js';
import { lanesRunning } from '../machines/machines.js';
import type { MachinePool } from '../machines/machines.js';
import { placeChildren } from '../machines/placement.js';
import type { Placement, ReadyChild } from '../machines/placement.js';

// Which pending children may take a lane now: every dependency integrated, scope-disjoint
// from every child in flight and from each other, within max_parallel and the child
// budget (children that left pending). A parked child holds its scope too (its lane's
// work comes back on resume): no overlapping sibling starts until it is integrated or
// dropped. Plan order, so the result is deterministic.

export function childrenStarted(record: BatchRecord): number {
  return record.children.filter(countsAgainstBudget).length;
}

export function budgetSpent(record: BatchRecord): boolean {
  return childrenStarted(record) >= record.budget.max_children || tokensSpent(record);
}

/** The token budget is reached: no new lane starts (the lanes at work go on to their end). */
export function tokensSpent(record: BatchRecord): boolean {
  const max = record.budget.max_tokens;
  return max !== undefined && (record.tokens_spent ?? 0) >= max;
}

export function startableChildren(record: BatchRecord, plan: Plan): string[] {
  return picksWithin(record, plan, record.max_parallel);
}

/**
 * The children that take the next `count` slots once slots free up (DESIGN §7, "Lanes made
 * ahead"): startable now but for max_parallel, disjoint in scope from every child in flight,
 * from the children startable now and from each other, within the budget. Their lanes can
 * be made before a slot frees, so a freed slot waits only for its lane to be offered.
 */
export function nextToStart(record: BatchRecord, plan: Plan, count: number): string[] {
  // The picks are greedy in plan order, so the ones for more slots begin with today's.
  const inFlight = record.children.filter((c) => IN_FLIGHT_STATES.has(c.state)).length;
  const now = Math.max(0, record.max_parallel - inFlight);
  return picksWithin(record, plan, record.max_parallel + count).slice(now);
}

function picksWithin(record: BatchRecord, plan: Plan, slots: number): string[] {
  const scopeOf = new Map(plan.children.map((c) => [c.id, c.scope]));
  const occupied = record.children
    .filter((c) => IN_FLIGHT_STATES.has(c.state))
    .map((c) => scopeOf.get(c.task_id) ?? ['**']);
  const reserved = record.children
    .filter((c) => c.state === 'needs_human')
    .map((c) => scopeOf.get(c.task_id) ?? ['**']);
  const budgetLeft = tokensSpent(record) ? 0 : record.budget.max_children - childrenStarted(record);
  const picks: string[] = [];
  for (const child of record.children) {
    if (occupied.length >= slots || picks.length >= budgetLeft) break;
    if (!isStartable(record, child)) continue;
    const scope = scopeOf.get(child.task_id) ?? ['**'];
    if ([...occupied, ...reserved].some((other) => scopesOverlap(other, scope))) continue;
    picks.push(child.task_id);
    occupied.push(scope);
  }
  return picks;
}

/**
 * The children that start now and the machine of each (core/machines/placement.ts): without
 * a pool, startableChildren on the local machine, exactly as without machines. With one, the
 * children ready by dependencies and scope (in plan order) are placed on free slots.
 */
export function placedChildren(record: BatchRecord, plan: Plan, pool: MachinePool | null): Placement[] {
  if (pool === null)
    return startableChildren(record, plan).map((task_id) => ({ task_id, machine: LOCAL_MACHINE }));
  const budgetLeft = tokensSpent(record) ? 0 : record.budget.max_children - childrenStarted(record);
  return placeChildren({
    ready: readyChildren(record, plan),
    machines: pool.machines,
    running: lanesRunning(record),
    maxParallel: record.max_parallel,
    unavailable: new Set([...pool.unreachable, ...pool.lost]),
  }).slice(0, Math.max(0, budgetLeft));
}

/**
 * The lanes to make ahead with a pool (DESIGN §7): only for children whose machine is known
 * before a slot frees (a pin, a move), on that machine; an unpinned child's machine is
 * decided when the slot frees, so its lane is not made before.
 */
export function placedAhead(record: BatchRecord, plan: Plan, pool: MachinePool, count: number): Placement[] {
  const now = new Set(placedChildren(record, plan, pool).map((p) => p.task_id));
  const names = new Set(pool.machines.map((m) => m.name));
  const away = new Set([...pool.unreachable, ...pool.lost]);
  const budgetLeft = tokensSpent(record)
    ? 0
    : record.budget.max_children - childrenStarted(record) - now.size;
  return readyChildren(record, plan)
    .filter((c) => !now.has(c.task_id) && c.pin !== undefined && names.has(c.pin) && !away.has(c.pin))
    .slice(0, Math.max(0, Math.min(count, budgetLeft)))
    .map((c) => ({ task_id: c.task_id, machine: c.pin! }));
}

/** The machine a child must start on, if any: where a move sent it, else the plan's pin. */
export function pinOf(record: BatchRecord, plan: Plan, taskId: string): string | undefined {
  return (
    record.children.find((c) => c.task_id === taskId)?.machine ??
    plan.children.find((c) => c.id === taskId)?.machine
  );
}

/** Pending children that may start by dependencies and scope, in plan order (no slot limit). */
export function readyChildren(record: BatchRecord, plan: Plan): ReadyChild[] {
  const scopeOf = new Map(plan.children.map((c) => [c.id, c.scope]));
  const held = record.children
    .filter((c) => IN_FLIGHT_STATES.has(c.state) || c.state === 'needs_human')
    .map((c) => scopeOf.get(c.task_id) ?? ['**']);
  const ready: ReadyChild[] = [];
  for (const child of record.children) {
    if (!isStartable(record, child)) continue;
    const scope = scopeOf.get(child.task_id) ?? ['**'];
    if (held.some((other) => scopesOverlap(other, scope))) continue;
    const pin = pinOf(record, plan, child.task_id);
    ready.push(pin === undefined ? { task_id: child.task_id } : { task_id: child.task_id, pin });
    held.push(scope);
  }
  return ready;
}
