import { conflictPathsOf } from './rework-onto-head.js';
import type { BatchRecord, ChildRecord } from '../records/record.js';

// What a human can do next with each parked child (docs/DECISIONS.md, "No dead ends"):
// every stop names only commands that exist.

/** One line per parked child: why, then the ways on. */
export function childAdvice(record: BatchRecord, child: ChildRecord): string {
  const id = record.batch_id;
  const fix = child.lane ? `fix the lane (${child.lane.path}) and resume` : 'resume';
  const resolve = conflictPathsOf(child.reason)
    ? `resolve the conflict markers in ${child.lane?.path ?? 'the lane'}, then resume`
    : fix;
  return `${child.task_id}: ${resolve} (lanes resume ${id} --approve, or R in the TUI), or drop it (lanes drop ${id} ${child.task_id})`;
}

export function parkedAdvice(record: BatchRecord): string {
  const parked = record.children.filter((c) => c.state === 'needs_human');
  if (parked.length === 0)
    return `Nothing is parked; go on with lanes resume ${record.batch_id} --approve, or end it with lanes cancel ${record.batch_id}.`;
  return `${parked.map((c) => childAdvice(record, c)).join('; ')}; or end the batch: lanes cancel ${record.batch_id}.`;
}
