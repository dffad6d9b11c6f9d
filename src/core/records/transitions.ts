import type { BatchRecord, BatchState, ChildRecord, ChildState, LaneBinding } from './record.js';
import { INTEGRATED_STATES, IN_FLIGHT_STATES, QUIET_BATCH_STATES } from './record.js';
import { LOCAL_MACHINE } from '../basics/ids.js';

// The legal moves of a child and of a batch, as pure functions returning a new record.
// The tick composes these; the record validator accepts every record they can build.

export class IllegalTransition extends Error {
  override readonly name = 'IllegalTransition';
}

function child(record: BatchRecord, taskId: string): ChildRecord {
  const found = record.children.find((c) => c.task_id === taskId);
  if (!found) throw new IllegalTransition(`no child "${taskId}" in batch ${record.batch_id}`);
  return found;
}

function expect(c: ChildRecord, allowed: readonly ChildState[], move: string): void {
  if (!allowed.includes(c.state)) throw new IllegalTransition(`${move}: child ${c.task_id} is ${c.state}`);
}

function withChild(record: BatchRecord, taskId: string, patch: Partial<ChildRecord>): BatchRecord {
  return { ...record, children: record.children.map((c) => (c.task_id === taskId ? { ...c, ...patch } : c)) };
}

/** A child that may take a lane: pending, and every dependency integrated. */
export function isStartable(record: BatchRecord, c: ChildRecord): boolean {
  if (c.state !== 'pending') return false;
  return c.blocked_by.every((dep) => INTEGRATED_STATES.has(child(record, dep).state));
}

/** `machine`: the machine the lane is on (kept in the record unless it is the local one). */
export function admitLane(
  record: BatchRecord,
  taskId: string,
  lane: Omit<LaneBinding, 'lane_commit' | 'run_id'>,
  machine: string = LOCAL_MACHINE,
) {
  const c = child(record, taskId);
  expect(c, ['pending'], 'admit');
  if (!isStartable(record, c)) throw new IllegalTransition(`admit: child ${taskId} is not startable`);
  const { machine: _sent, ...rest } = c;
  const admitted: ChildRecord = {
    ...rest,
    state: 'lane_admitted',
    lane: { ...lane, lane_commit: null, run_id: null },
    ...(machine !== LOCAL_MACHINE ? { machine } : {}),
  };
  return { ...record, children: record.children.map((x) => (x.task_id === taskId ? admitted : x)) };
}

/**
 * `resume --approve --move <child>=<machine>`: a parked child starts again from its base on
 * that machine. Its old lane is left where it is (its work stays on its branch there); the
 * record binds the child to no lane until the new one is admitted.
 */
export function moveChild(record: BatchRecord, taskId: string, machine: string): BatchRecord {
  const c = child(record, taskId);
  expect(c, ['needs_human'], 'move');
  // (a lane on a machine stays there until its work is brought home: the record keeps where)
  const left =
    c.lane !== null && c.machine !== undefined && c.machine !== LOCAL_MACHINE
      ? [{ machine: c.machine, path: c.lane.path, branch: c.lane.branch, base_head: c.lane.base_head }]
      : [];
  const moved: ChildRecord = {
    ...c,
    state: 'pending',
    reason: null,
    lane: null,
    qa_failures: 0,
    machine,
    ...(left.length || c.left_lanes ? { left_lanes: [...(c.left_lanes ?? []), ...left] } : {}),
  };
  return unskip({ ...record, children: record.children.map((x) => (x.task_id === taskId ? moved : x)) });
}

export function enroll(record: BatchRecord, taskId: string, runId: string): BatchRecord {
  const c = child(record, taskId);
  expect(c, ['lane_admitted'], 'enroll');
  return withChild(record, taskId, { state: 'enrolled', lane: { ...c.lane!, run_id: runId } });
}

export function recordQaFailure(record: BatchRecord, taskId: string): BatchRecord {
  const c = child(record, taskId);
  expect(c, ['enrolled'], 'qa failure');
  return withChild(record, taskId, { qa_failures: c.qa_failures + 1 });
}

export function settle(record: BatchRecord, taskId: string): BatchRecord {
  expect(child(record, taskId), ['enrolled'], 'settle');
  return withChild(record, taskId, { state: 'settled' });
}

export function commitLane(record: BatchRecord, taskId: string, laneCommit: string): BatchRecord {
  const c = child(record, taskId);
  expect(c, ['settled'], 'lane commit');
  return withChild(record, taskId, {
    state: 'lane_committed',
    lane: { ...c.lane!, lane_commit: laneCommit },
  });
}

export function integrate(record: BatchRecord, taskId: string, commit: string): BatchRecord {
  expect(child(record, taskId), ['lane_committed'], 'integrate');
  const next = withChild(record, taskId, { state: 'integrated', commit });
  return { ...next, commits: [...next.commits, commit] };
}

export function release(record: BatchRecord, taskId: string): BatchRecord {
  expect(child(record, taskId), ['integrated'], 'release');
  return withChild(record, taskId, { state: 'released' });
}

/** Parks a child and skips every pending dependent, transitively. */
export function park(record: BatchRecord, taskId: string, reason: string): BatchRecord {
  const c = child(record, taskId);
  if (INTEGRATED_STATES.has(c.state) || c.state === 'skipped_blocked' || c.state === 'dropped')
    throw new IllegalTransition(`park: child ${taskId} is ${c.state}`);
  return skipDependents(withChild(record, taskId, { state: 'needs_human', reason, commit: null }), taskId);
}

function skipDependents(record: BatchRecord, parkedId: string): BatchRecord {
  let next = record;
  for (const c of record.children) {
    if (c.state === 'pending' && c.blocked_by.includes(parkedId)) {
      next = withChild(next, c.task_id, {
        state: 'skipped_blocked',
        reason: `blocked by parked child ${parkedId}`,
      });
      next = skipDependents(next, c.task_id);
    }
  }
  return next;
}

/** Puts a parked child back where its lane's facts say it is (resume, DESIGN §4). */
export function unpark(
  record: BatchRecord,
  taskId: string,
  to: 'pending' | 'enrolled' | 'settled' | 'lane_committed',
) {
  const c = child(record, taskId);
  expect(c, ['needs_human'], 'unpark');
  // Its dependents were skipped when it was parked: they return to pending with it.
  if (to === 'pending')
    return unskip(withChild(record, taskId, { state: 'pending', reason: null, lane: null, qa_failures: 0 }));
  if (!c.lane?.run_id) throw new IllegalTransition(`unpark: child ${taskId} has no enrolled lane`);
  if (to === 'lane_committed' && !c.lane.lane_commit)
    throw new IllegalTransition(`unpark: ${taskId} has no lane commit`);
  const lane = to === 'lane_committed' ? c.lane : { ...c.lane, lane_commit: null };
  // A fresh approval restarts the QA failure count: the human looked at the lane.
  return unskip(withChild(record, taskId, { state: to, reason: null, lane, qa_failures: 0 }));
}

/** skipped_blocked children whose dependencies are no longer parked return to pending. */
export function unskip(record: BatchRecord): BatchRecord {
  let next = record;
  let changed = true;
  while (changed) {
    changed = false;
    for (const c of next.children) {
      if (c.state !== 'skipped_blocked') continue;
      const deps = c.blocked_by.map((d) => child(next, d));
      if (deps.some((d) => d.state === 'needs_human' || d.state === 'skipped_blocked')) continue;
      next = withChild(next, c.task_id, { state: 'pending', reason: null });
      changed = true;
    }
  }
  return next;
}

export function setBatchState(record: BatchRecord, state: BatchState): BatchRecord {
  if (QUIET_BATCH_STATES.has(state) && record.children.some((c) => IN_FLIGHT_STATES.has(c.state)))
    throw new IllegalTransition(`batch ${state}: children are still in flight`);
  return { ...record, batch_state: state };
}

export function adoptHead(record: BatchRecord, from: string, to: string): BatchRecord {
  const { foreign_head: _seen, ...rest } = record; // (adopted: nothing waits for approval any more)
  return { ...rest, adopted_heads: [...record.adopted_heads, { from, to }] };
}

/** The batch stops for a human: its branch holds commits lanes did not make (foreign_head). */
export function holdForeignHead(
  record: BatchRecord,
  from: string,
  to: string,
  commits: string[],
): BatchRecord {
  return { ...record, batch_state: 'needs_human', foreign_head: { from, to, commits } };
}
