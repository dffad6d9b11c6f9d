import { describe, expect, it } from 'vitest';
import { newBatchRecord } from '../../src/core/records/new-batch-record.js';
import { parsePlanText, planDigest } from '../../src/core/plan/plan.js';
import { batchRecordSchema, checkRecordInvariants } from '../../src/core/records/record.js';

// The prepared record a confirmation writes, built by the core from the plan alone: plain
// values in and out, no git, no files.

const plan = parsePlanText(
  JSON.stringify({
    batch: 'b1',
    children: [
      { id: 'T1', goal: 'g', scope: ['src'], acceptance: [{ id: 'A1', run: ['true'] }] },
      { id: 'T2', goal: 'g', scope: ['doc'], acceptance: [{ id: 'A1', run: ['true'] }], blocked_by: ['T1'] },
    ],
  }),
  'plan.json',
);
const NOW = '2026-12-01T09:00:00.000Z';
const BASE = 'c'.repeat(40);

describe('newBatchRecord', () => {
  const record = newBatchRecord({
    plan,
    baseHead: BASE,
    budget: { max_children: 2, qa_failure_limit: 3 },
    maxParallel: 2,
    now: NOW,
  });

  it('is a sound prepared record: schema and invariants hold', () => {
    expect(batchRecordSchema.safeParse(record).success).toBe(true);
    expect(checkRecordInvariants(record)).toEqual([]);
    expect(record.batch_state).toBe('prepared');
  });

  it('names the plan, its digest, the batch branch and the base', () => {
    expect(record).toMatchObject({
      batch_id: 'b1',
      plan_digest: planDigest(plan),
      branch: 'batch/b1',
      base_head: BASE,
      confirmation_time: NOW,
      created_at: NOW,
      updated_at: NOW,
      commits: [],
      adopted_heads: [],
    });
  });

  it('has one pending child per plan child, with its dependencies, in plan order', () => {
    expect(record.children.map((c) => [c.task_id, c.state, c.blocked_by, c.lane, c.commit])).toEqual([
      ['T1', 'pending', [], null, null],
      ['T2', 'pending', ['T1'], null, null],
    ]);
  });

  it('shares no arrays with the plan or the settings it was given', () => {
    const budget = { max_children: 2, qa_failure_limit: 3 };
    const r = newBatchRecord({ plan, baseHead: BASE, budget, maxParallel: 1, now: NOW });
    r.children[1]!.blocked_by.push('X');
    r.budget.max_children = 9;
    expect(plan.children[1]!.blocked_by).toEqual(['T1']);
    expect(budget.max_children).toBe(2);
  });
});
