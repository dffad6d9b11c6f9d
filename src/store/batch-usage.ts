import { sumUsage } from '../core/records/usage.js';
import type { Usage } from '../core/records/usage.js';
import type { BatchRecord } from '../core/records/record.js';
import { TaskStore } from './task-store.js';

// What the agents of a batch reported they spent (issue 27), read from the lane kernels:
// per attempt, per child and for the batch. null where nothing was reported (a command
// executor, an attempt before its agent's first report).

export interface BatchUsage {
  /** The sum over every child; null when no child reported any. */
  total: Usage | null;
  children: Record<string, { usage: Usage | null; attempts: { n: number; usage: Usage | null }[] }>;
}

export function readBatchUsage(stateDir: string, record: BatchRecord): BatchUsage {
  const tasks = new TaskStore(stateDir, record.batch_id);
  const children: BatchUsage['children'] = {};
  for (const child of record.children) {
    const read = child.lane ? tasks.read(child.task_id) : null;
    const attempts = read?.kind === 'ok' ? read.record.attempts : [];
    children[child.task_id] = {
      usage: sumUsage(attempts),
      attempts: attempts.map((a) => ({ n: a.n, usage: a.usage ?? null })),
    };
  }
  return { total: sumUsage(Object.values(children)), children };
}
