import type { BatchRecord, ChildRecord } from '../../src/core/records/record.js';
import { RECORD_CONTRACT } from '../../src/core/records/record.js';

// Sound batch records to start tests from.

export const SHA = (n: number) => n.toString(16).padStart(40, '0');
export const DIGEST = 'a'.repeat(64);

export function pendingChild(taskId: string, blockedBy: string[] = []): ChildRecord {
  return {
    task_id: taskId,
    blocked_by: blockedBy,
    state: 'pending',
    reason: null,
    commit: null,
    lane: null,
    qa_failures: 0,
  };
}

/** A prepared record: every child pending. `deps` maps a child id to its blocked_by. */
export function preparedRecord(
  batchId = 'b1',
  deps: Record<string, string[]> = { T1: [], T2: [], T3: ['T1'] },
): BatchRecord {
  const ids = Object.keys(deps);
  return {
    contract: RECORD_CONTRACT,
    batch_id: batchId,
    plan_digest: DIGEST,
    base_head: SHA(1),
    branch: `batch/${batchId}`,
    confirmation_time: '2026-11-29T10:00:00.000Z',
    budget: { max_children: ids.length, qa_failure_limit: 3 },
    max_parallel: 2,
    batch_state: 'prepared',
    children: ids.map((id) => pendingChild(id, deps[id])),
    commits: [],
    adopted_heads: [],
    created_at: '2026-11-29T10:00:00.000Z',
    updated_at: '2026-11-29T10:00:00.000Z',
  };
}
