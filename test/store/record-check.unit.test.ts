import { describe, expect, it } from 'vitest';
import type { BatchRecord, ChildRecord } from '../../src/core/records/record.js';
import { deepFreeze } from '../../src/core/basics/frozen.js';
import { RecordCheck } from '../../src/store/record-check.js';
import { preparedRecord, SHA } from '../helpers/records.js';

// The check before a record is written (src/store/record-check.ts): a part unchanged since
// the last record that passed (the same frozen object, or a child with the same JSON) is not
// parsed again, and every other one is.

const broken = (record: BatchRecord, i: number, change: Record<string, unknown>): BatchRecord =>
  ({
    ...record,
    children: record.children.map((c, j) => (j === i ? { ...c, ...change } : c)),
  }) as BatchRecord;

describe('a record checked before it is written', () => {
  it('finds a child made wrong since the last record that passed, wherever it is', () => {
    const check = new RecordCheck();
    const record = preparedRecord();
    expect(check.problems(record)).toEqual([]);
    expect(check.problems(record)).toEqual([]);
    for (const i of [0, 2]) {
      expect(check.problems(broken(record, i, { state: 'flying' })).join('\n')).toMatch(
        new RegExp(`children\\[${i}\\]\\.state`),
      );
      expect(check.problems(broken(record, i, { qa_failures: -1 })).join('\n')).toMatch(/qa_failures/);
      expect(check.problems(broken(record, i, { extra: 1 })).join('\n')).toMatch(/extra/);
    }
    // (a wrong record passes nothing on: the sound one is still taken, the wrong one still refused)
    expect(check.problems(record)).toEqual([]);
    expect(check.problems(broken(record, 1, { lane: { path: '' } })).length).toBeGreaterThan(0);
  });

  it('gives what a whole parse gives for a record that is no record', () => {
    const check = new RecordCheck();
    for (const bad of [
      {},
      { ...preparedRecord(), children: undefined },
      { ...preparedRecord(), children: [] },
    ])
      expect(check.problems(bad as unknown as BatchRecord).length).toBeGreaterThan(0);
  });

  it('still holds every invariant of a record whose children all passed before', () => {
    const check = new RecordCheck();
    const record = preparedRecord();
    expect(check.problems(record)).toEqual([]);
    // (the same children, but a branch not the batch's: an invariant, not a shape)
    expect(check.problems({ ...record, branch: 'batch/other' }).join('\n')).toMatch(/branch: must be/);
  });

  it('takes a frozen part again by identity, and anything not frozen all the way down by what it holds now', () => {
    const check = new RecordCheck();
    const record = deepFreeze(preparedRecord());
    expect(check.problems(record)).toEqual([]);
    // (the same frozen children and budget in a new record: taken, and a new wrong part still found)
    expect(check.problems({ ...record, max_parallel: 0 }).join('\n')).toMatch(/max_parallel/);
    expect(check.problems(broken(record, 1, { state: 'flying' })).join('\n')).toMatch(/children\[1\]\.state/);
    expect(check.problems({ ...record, budget: { ...record.budget, max_children: -1 } }).join('\n')).toMatch(
      /max_children/,
    );
    // A child frozen on top only: its lane can still change after it passed, and is looked at again.
    const lane = { path: '/l', branch: 'lane/b1/T1', base_head: SHA(1), lane_commit: null, run_id: 'r' };
    const shallow = Object.freeze({ ...record.children[0]!, state: 'lane_admitted', lane }) as ChildRecord;
    const admitted = { ...record, batch_state: 'running', children: [shallow, ...record.children.slice(1)] };
    expect(check.problems(admitted as BatchRecord)).toEqual([]);
    (lane as { run_id: unknown }).run_id = 5; // (a shape no invariant looks at)
    expect(check.problems({ ...admitted } as BatchRecord).join('\n')).toMatch(/lane\.run_id/);
  });
});
