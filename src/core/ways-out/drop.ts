import { badInput } from '../basics/errors.js';
import type { BatchRecord, ChildRecord } from '../records/record.js';
import { INTEGRATED_STATES } from '../records/record.js';

// Dropping children (docs/DECISIONS.md, "No dead ends"): a child the user gives up on
// leaves the batch as `dropped`, with every child that depends on it (they could never
// start). Their lane binding stays in the record: it names the branch their work is on.
// The batch goes on without them; `completed` then lists them.

export const DROPPED_BY_USER = 'dropped by the user';

/** The child and every child that depends on it, transitively, in plan order. */
export function dropClosure(record: BatchRecord, taskId: string): string[] {
  const out = new Set<string>([taskId]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const c of record.children) {
      if (out.has(c.task_id) || !c.blocked_by.some((d) => out.has(d))) continue;
      out.add(c.task_id);
      grew = true;
    }
  }
  return record.children.filter((c) => out.has(c.task_id)).map((c) => c.task_id);
}

/** Why a child cannot be dropped, or null. In-flight children may be: their executor is stopped first. */
export function dropRefusal(record: BatchRecord, taskId: string): string | null {
  const c = record.children.find((x) => x.task_id === taskId);
  if (!c) return `no child "${taskId}" in batch ${record.batch_id}`;
  if (INTEGRATED_STATES.has(c.state))
    return `child ${taskId} is ${c.state}: its work is on ${record.branch} already`;
  const dependent = dropClosure(record, taskId)
    .map((id) => record.children.find((x) => x.task_id === id)!)
    .find((d) => d.task_id !== taskId && INTEGRATED_STATES.has(d.state));
  if (dependent) return `child ${dependent.task_id} depends on ${taskId} and is ${dependent.state}`;
  return null;
}

/** Throws a usage error (exit 2) when the child cannot be dropped. */
export function checkDrop(record: BatchRecord, taskId: string): void {
  const why = dropRefusal(record, taskId);
  if (why) throw badInput('usage', `lanes drop: ${why}`);
}

/**
 * The record with the child and its dependents dropped. Already dropped children keep
 * their reason (dropping again changes nothing). `reason` is the named child's reason;
 * its dependents are "dropped with <child>".
 */
export function dropChildren(
  record: BatchRecord,
  taskId: string,
  reason: string = DROPPED_BY_USER,
): BatchRecord {
  checkDropLegal(record, taskId);
  const closure = new Set(dropClosure(record, taskId));
  const children = record.children.map((c): ChildRecord => {
    if (!closure.has(c.task_id) || c.state === 'dropped') return c;
    return {
      ...c,
      state: 'dropped',
      reason: c.task_id === taskId ? reason : `dropped with ${taskId}`,
      commit: null,
    };
  });
  return { ...record, children };
}

function checkDropLegal(record: BatchRecord, taskId: string): void {
  const why = dropRefusal(record, taskId);
  if (why) throw new Error(`drop: ${why}`);
}

/** Dropped children whose lane path may still hold a worktree (the steward moves it to the trash). */
export function lanesToTrash(record: {
  readonly children: readonly ChildRecord[];
}): { task_id: string; path: string; branch: string; base_head: string }[] {
  return record.children.flatMap((c) =>
    c.state === 'dropped' && c.lane
      ? [{ task_id: c.task_id, path: c.lane.path, branch: c.lane.branch, base_head: c.lane.base_head }]
      : [],
  );
}

/** The dropped children, for reports: `T2 (dropped by the user), T3 (dropped with T2)`. */
export function describeDropped(record: BatchRecord): string {
  return record.children
    .filter((c) => c.state === 'dropped')
    .map((c) => `${c.task_id} (${c.reason}${c.lane ? `; work on ${c.lane.branch}` : ''})`)
    .join(', ');
}
