import { z } from 'zod';
import { finalStateProblems, finalVerificationSchema } from './final-state.js';
import { machineNameSchema, shaSchema, storedIdSchema } from '../basics/ids.js';

// The batch record (DESIGN §3): its shape as a zod schema, and the invariants a schema
// cannot say, checked by checkRecordInvariants. The store runs both on every read and
// every write.

export const RECORD_CONTRACT = 'lanes/batch/v1';

export const BATCH_STATES = [
  'prepared',
  'running',
  'needs_human',
  'completed',
  'budget_stopped',
  'failed',
  'rejected',
  'cancelled',
] as const;
export type BatchState = (typeof BATCH_STATES)[number];
// budget_stopped is not terminal: `resume --approve --budget N` reopens it (docs/DECISIONS.md,
// "No dead ends"). States that stop for a human are needs_human and budget_stopped.
export const TERMINAL_BATCH_STATES: ReadonlySet<BatchState> = new Set([
  'completed',
  'failed',
  'rejected',
  'cancelled',
]);
/** Batch states in which no child may be in flight. */
export const QUIET_BATCH_STATES: ReadonlySet<BatchState> = new Set([
  'failed',
  'budget_stopped',
  'rejected',
  'cancelled',
]);

export const CHILD_STATES = [
  'pending',
  'lane_admitted',
  'enrolled',
  'settled',
  'lane_committed',
  'integrated',
  'released',
  'needs_human',
  'skipped_blocked',
  'dropped',
] as const;
export type ChildState = (typeof CHILD_STATES)[number];

/** Children holding a lane whose work is not integrated yet. */
export const IN_FLIGHT_STATES: ReadonlySet<ChildState> = new Set([
  'lane_admitted',
  'enrolled',
  'settled',
  'lane_committed',
]);
export const INTEGRATED_STATES: ReadonlySet<ChildState> = new Set(['integrated', 'released']);
/** Children that left the batch (work kept on their lane branch) or are in it for good. */
export const SETTLED_FOR_BATCH: ReadonlySet<ChildState> = new Set(['integrated', 'released', 'dropped']);

/** A child counts against budget.max_children once it took (or tried to take) a lane. */
export function countsAgainstBudget(child: ChildRecord): boolean {
  if (child.state === 'pending' || child.state === 'skipped_blocked') return false;
  if (child.state === 'dropped') return child.lane !== null;
  return true;
}

const sha = shaSchema;
const timestamp = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 timestamp' });
const id = storedIdSchema;

export const laneBindingSchema = z.strictObject({
  path: z.string().min(1),
  branch: z.string().min(1),
  base_head: sha,
  lane_commit: sha.nullable(),
  run_id: z.string().min(1).nullable(),
});
export type LaneBinding = z.output<typeof laneBindingSchema>;

/** A lane a child left on a machine when it was moved elsewhere (`resume --move`): its work is brought home before that machine's things of the batch go. */
export const leftLaneSchema = z.strictObject({
  machine: machineNameSchema,
  path: z.string().min(1),
  branch: z.string().min(1),
  base_head: sha,
});
export type LeftLane = z.output<typeof leftLaneSchema>;

export const childRecordSchema = z.strictObject({
  task_id: id,
  blocked_by: z.array(id),
  state: z.enum(CHILD_STATES),
  reason: z.string().min(1).nullable(),
  commit: sha.nullable(),
  lane: laneBindingSchema.nullable(),
  qa_failures: z.number().int().nonnegative(),
  /**
   * The machine its lane is on, once provisioned there (absent: local, so a record from
   * before machines reads as it always did); on a pending child, where it is to start (a
   * `resume --move`).
   */
  machine: machineNameSchema.optional(),
  /** Lanes it left on machines when moved (absent: none). */
  left_lanes: z.array(leftLaneSchema).optional(),
});
export type ChildRecord = z.output<typeof childRecordSchema>;

export const batchRecordSchema = z.strictObject({
  contract: z.literal(RECORD_CONTRACT, {
    message: `must be "${RECORD_CONTRACT}" (written by another version of lanes?)`,
  }),
  batch_id: id,
  plan_digest: z.string().regex(/^[0-9a-f]{64}$/, { message: 'must be a sha256 hex digest' }),
  base_head: sha,
  branch: z.string().min(1),
  confirmation_time: timestamp,
  budget: z.strictObject({
    max_children: z.number().int().positive(),
    qa_failure_limit: z.number().int().positive(),
    /** Tokens the agents may report spent before no new lane starts (absent: no limit). */
    max_tokens: z.number().int().positive().optional(),
  }),
  /** Tokens the agents reported spent so far (the kernels' usage, summed by the tick). */
  tokens_spent: z.number().int().nonnegative().optional(),
  max_parallel: z.number().int().positive(),
  batch_state: z.enum(BATCH_STATES),
  children: z.array(childRecordSchema).min(1),
  commits: z.array(sha),
  adopted_heads: z.array(z.strictObject({ from: sha, to: sha })),
  /**
   * The batch branch moved forwards by commits lanes did not make, while it ran (a hand
   * commit, an executor's own): not adopted until a fresh approval (absent when none).
   */
  foreign_head: z.strictObject({ from: sha, to: sha, commits: z.array(sha) }).optional(),
  /** The final verification in progress (absent when none is). */
  final_verification: finalVerificationSchema.optional(),
  created_at: timestamp,
  updated_at: timestamp,
});
export type BatchRecord = z.output<typeof batchRecordSchema>;

/** Every invariant the record breaks, one line each (empty when it is sound). */
export function checkRecordInvariants(record: BatchRecord): string[] {
  const problems: string[] = [];
  if (record.branch !== `batch/${record.batch_id}`)
    problems.push(`branch: must be "batch/${record.batch_id}", got "${record.branch}"`);
  if (Date.parse(record.updated_at) < Date.parse(record.created_at))
    problems.push('updated_at: is earlier than created_at');

  const byId = new Map<string, ChildRecord>();
  record.children.forEach((child, i) => {
    if (byId.has(child.task_id)) problems.push(`children[${i}]: duplicate child "${child.task_id}"`);
    byId.set(child.task_id, child);
  });

  record.children.forEach((child, i) => {
    const at = `children[${i}] (${child.task_id})`;
    for (const line of childProblems(record, child, byId)) problems.push(`${at}: ${line}`);
  });
  const cycle = dependencyCycle(byId);
  if (cycle) problems.push(`blocked_by: dependency cycle ${cycle.join(' -> ')}`);

  const childCommits = record.children.flatMap((c) => (c.commit ? [c.commit] : []));
  if (new Set(record.commits).size !== record.commits.length) problems.push('commits: lists a commit twice');
  const ofChildren = new Set(childCommits);
  for (const commit of record.commits)
    if (!ofChildren.has(commit)) problems.push(`commits: ${commit} belongs to no integrated child`);
  if (ofChildren.size !== childCommits.length)
    problems.push('children: two children name the same integration commit');

  const left = record.children.filter(countsAgainstBudget).length;
  if (left > record.budget.max_children)
    problems.push(`budget: ${left} children started, more than max_children ${record.budget.max_children}`);

  const state = record.batch_state;
  // Name the children that break a batch-level rule: `"T3" (pending), "T5" (enrolled)`.
  const named = (children: ChildRecord[]) => children.map((c) => `"${c.task_id}" (${c.state})`).join(', ');
  // (a child dropped before the batch ran is not started)
  const started = record.children.filter((c) => c.state !== 'pending' && !(c.state === 'dropped' && !c.lane));
  if (state === 'prepared' && started.length > 0)
    problems.push(`batch_state: prepared, but a child is not pending: ${named(started)}`);
  if (state === 'prepared' && record.commits.length > 0)
    problems.push('batch_state: prepared, but commits is not empty');
  const notIntegrated = record.children.filter((c) => !SETTLED_FOR_BATCH.has(c.state));
  if (state === 'completed' && notIntegrated.length > 0)
    problems.push(`batch_state: completed, but a child is not integrated: ${named(notIntegrated)}`);
  const inFlight = record.children.filter((c) => IN_FLIGHT_STATES.has(c.state));
  if (QUIET_BATCH_STATES.has(state) && inFlight.length > 0)
    problems.push(`batch_state: ${state}, but a child is still in flight: ${named(inFlight)}`);
  problems.push(...finalVerificationProblems(record));
  return problems;
}

function finalVerificationProblems(record: BatchRecord): string[] {
  const fv = record.final_verification;
  if (!fv) return [];
  const out = finalStateProblems(fv).map((p) => `final_verification.${p}`);
  // (failed: the lineage guard may fail a batch in the middle of a verification;
  // cancelled, where that state exists: the user may cancel it then)
  if (!['running', 'failed', 'cancelled'].includes(record.batch_state))
    out.push(`final_verification: the batch is ${record.batch_state}, not running`);
  const notIntegrated = record.children.filter((c) => !SETTLED_FOR_BATCH.has(c.state));
  if (fv.phase !== 'verify_rebuilt' && notIntegrated.length > 0)
    out.push(`final_verification: ${fv.phase}, but "${notIntegrated[0]!.task_id}" is not integrated`);
  return out;
}

/** One cycle of blocked_by edges longer than a self-reference (reported per child), or null. */
function dependencyCycle(byId: Map<string, ChildRecord>): string[] | null {
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const visit = (id: string): string[] | null => {
    state.set(id, 'visiting');
    stack.push(id);
    for (const dep of byId.get(id)?.blocked_by ?? []) {
      if (dep === id || !byId.has(dep)) continue;
      if (state.get(dep) === 'visiting') return [...stack.slice(stack.indexOf(dep)), dep];
      if (!state.has(dep)) {
        const found = visit(dep);
        if (found) return found;
      }
    }
    stack.pop();
    state.set(id, 'done');
    return null;
  };
  for (const id of byId.keys()) {
    const found = state.has(id) ? null : visit(id);
    if (found) return found;
  }
  return null;
}

function childProblems(record: BatchRecord, child: ChildRecord, byId: Map<string, ChildRecord>): string[] {
  const out: string[] = [];
  const { state, lane } = child;
  const integrated = INTEGRATED_STATES.has(state);

  for (const dep of child.blocked_by) {
    if (dep === child.task_id) out.push('blocked_by: names the child itself');
    else if (!byId.has(dep)) out.push(`blocked_by: unknown child "${dep}"`);
  }
  if (new Set(child.blocked_by).size !== child.blocked_by.length) out.push('blocked_by: lists a child twice');

  if ((state === 'pending' || state === 'skipped_blocked') && lane !== null)
    out.push(`${state} but holds a lane`);
  if ((IN_FLIGHT_STATES.has(state) || integrated) && lane === null) out.push(`${state} without a lane`);
  if (lane !== null) {
    const branch = `lane/${record.batch_id}/${child.task_id}`;
    if (lane.branch !== branch) out.push(`lane.branch: must be "${branch}", got "${lane.branch}"`);
    if (!lane.path.startsWith('/')) out.push('lane.path: must be absolute');
  }
  if (
    (state === 'enrolled' || state === 'settled' || state === 'lane_committed' || integrated) &&
    !lane?.run_id
  )
    out.push(`${state} without a run_id`);
  if ((state === 'lane_admitted' || state === 'enrolled' || state === 'settled') && lane?.lane_commit)
    out.push(`${state} but lane.lane_commit is set`);
  if ((state === 'lane_committed' || integrated) && !lane?.lane_commit)
    out.push(`${state} without a lane commit`);

  if (integrated && child.commit === null) out.push(`${state} without a commit`);
  if (!integrated && child.commit !== null) out.push(`has a commit but is ${state}`);
  if (child.commit !== null && !record.commits.includes(child.commit))
    out.push('commit: missing from commits');

  const parked = state === 'needs_human' || state === 'skipped_blocked' || state === 'dropped';
  if (parked && child.reason === null) out.push(`${state} without a reason`);
  if (!parked && child.reason !== null) out.push(`${state} but carries a reason`);

  if (child.qa_failures > record.budget.qa_failure_limit)
    out.push(`qa_failures: ${child.qa_failures} is past the limit ${record.budget.qa_failure_limit}`);

  const deps = child.blocked_by.map((d) => byId.get(d)).filter((d): d is ChildRecord => d !== undefined);
  for (const dep of deps)
    if (lane !== null && !INTEGRATED_STATES.has(dep.state))
      out.push(`holds a lane, but its dependency "${dep.task_id}" is ${dep.state}, not integrated`);
  // A child that depends on a dropped one can never start: it is dropped with it.
  const droppedDep = deps.find((d) => d.state === 'dropped');
  if (droppedDep && state !== 'dropped')
    out.push(`${state}, but its dependency "${droppedDep.task_id}" is dropped (it must be dropped too)`);
  if (
    state === 'skipped_blocked' &&
    !deps.some((d) => d.state === 'needs_human' || d.state === 'skipped_blocked')
  )
    out.push('skipped_blocked, but no dependency is parked');
  return out;
}
