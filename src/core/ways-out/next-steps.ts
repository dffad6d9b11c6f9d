import { conflictPathsOf } from './rework-onto-head.js';
import { lostMachineOf } from '../machines/machines.js';
import type { BatchRecord, ChildRecord } from '../records/record.js';

// What a human can do next with each parked child (docs/DECISIONS.md, "No dead ends"):
// every stop names only commands that exist.

/** One line per parked child: why, then the ways on. */
export function childAdvice(record: BatchRecord, child: ChildRecord): string {
  const id = record.batch_id;
  const machine = lostMachineOf(child.reason);
  if (machine)
    return `${child.task_id}: resume once machine ${machine} is back (lanes resume ${id} --approve), start it again on another machine (lanes resume ${id} --approve --move ${child.task_id}=<machine>), or drop it (lanes drop ${id} ${child.task_id})`;
  const fix = child.lane ? `fix the lane (${child.lane.path}) and resume` : 'resume';
  const resolve = conflictPathsOf(child.reason)
    ? `resolve the conflict markers in ${child.lane?.path ?? 'the lane'}, then resume`
    : fix;
  return `${child.task_id}: ${resolve} (lanes resume ${id} --approve, or r in the TUI), or drop it (lanes drop ${id} ${child.task_id})`;
}

/** Why a batch holds for commits it did not make on its branch, and the ways on. */
export function foreignHeadAdvice(record: BatchRecord): string | null {
  const f = record.foreign_head;
  if (!f) return null;
  const shas = f.commits.map((c) => c.slice(0, 12)).join(', ');
  return (
    `batch_moved_outside_lanes: ${record.branch} moved from ${f.from.slice(0, 12)} to ${f.to.slice(0, 12)} by ` +
    `${f.commits.length} commit${f.commits.length === 1 ? '' : 's'} lanes did not make (${shas}): ` +
    `lanes resume ${record.batch_id} --approve adopts them, or move the branch back ` +
    `(git update-ref refs/heads/${record.branch} ${f.from.slice(0, 12)}) and lanes resume ${record.batch_id} --approve`
  );
}

export function parkedAdvice(record: BatchRecord): string {
  const foreign = foreignHeadAdvice(record);
  if (foreign) return foreign;
  const parked = record.children.filter((c) => c.state === 'needs_human');
  if (parked.length === 0)
    return `Nothing is parked; go on with lanes resume ${record.batch_id} --approve, or end it with lanes cancel ${record.batch_id}.`;
  return `${parked.map((c) => childAdvice(record, c)).join('; ')}; or end the batch: lanes cancel ${record.batch_id}.`;
}

/** The command that gives a human review verdict on a child waiting for one. */
export function reviewCommand(batchId: string, task: string): string {
  return `lanes tick ${batchId} --review ${task}=approve|reject`;
}

/**
 * The way on for a batch that is not terminal and that no lanes process runs (after `q`,
 * Ctrl-C, kill -9, or a headless run that left a review waiting): the reviews it waits
 * for, else the resume that goes on. Null when the report's own next step stands.
 */
export function stoppedNextStep(
  record: Pick<BatchRecord, 'batch_id' | 'batch_state'>,
  reviewing: readonly string[],
): string | null {
  const id = record.batch_id;
  if (record.batch_state !== 'running' && record.batch_state !== 'prepared') return null;
  if (reviewing.length) return reviewing.map((task) => reviewCommand(id, task)).join('; ');
  return `lanes resume ${id}`;
}
