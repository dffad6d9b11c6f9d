import { batchBranch } from '../basics/ids.js';
import { planDigest } from '../plan/plan.js';
import type { Plan } from '../plan/plan.js';
import { RECORD_CONTRACT } from './record.js';
import type { BatchRecord } from './record.js';

// The batch record a confirmation writes (DESIGN §3): `prepared`, every child `pending`
// with its dependencies, nothing integrated yet. The lane kernel's counterpart is
// newKernelRecord (src/core/kernel.ts).

export interface NewBatchFields {
  plan: Plan;
  /** The commit the plan's base named when it was confirmed. */
  baseHead: string;
  budget: BatchRecord['budget'];
  maxParallel: number;
  /** The confirmation time (ISO 8601): also when the record was created. */
  now: string;
}

export function newBatchRecord({ plan, baseHead, budget, maxParallel, now }: NewBatchFields): BatchRecord {
  return {
    contract: RECORD_CONTRACT,
    batch_id: plan.batch,
    plan_digest: planDigest(plan),
    base_head: baseHead,
    branch: batchBranch(plan.batch),
    confirmation_time: now,
    budget: { ...budget },
    max_parallel: maxParallel,
    batch_state: 'prepared',
    children: plan.children.map((c) => ({
      task_id: c.id,
      blocked_by: [...c.blocked_by],
      state: 'pending',
      reason: null,
      commit: null,
      lane: null,
      qa_failures: 0,
    })),
    commits: [],
    adopted_heads: [],
    created_at: now,
    updated_at: now,
  };
}
