import { describe, expect, it } from 'vitest';
import type { BatchRecord } from '../../src/core/records/record.js';
import { RecordCheck } from '../../src/store/record-check.js';
import { preparedRecord } from '../helpers/records.js';

// The check before a record is written (src/store/record-check.ts): a child unchanged since
// the last record that passed is not parsed again, and every other one is.

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
});
