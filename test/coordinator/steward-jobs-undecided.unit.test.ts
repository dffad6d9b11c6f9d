import { describe, expect, it } from 'vitest';
import type { CoordinatorStorePort } from '../../src/core/ports/store-port.js';
import type { ChildRecord } from '../../src/core/records/record.js';
import { stewardJobs } from '../helpers/steward-jobs.js';
import type { Steward } from '../../src/coordinator/lanes/steward.js';

// A tick that ends the batch (a cancel, a broken lineage) returns before its admission
// step, so the lanes it was offered are neither admitted nor refused: no later tick decides
// them. The coordinator hands them back, and each lane the record does not name is removed
// as a lane made ahead and not needed is (test/e2e/reliability/cancel-ahead.test.ts meets
// this only when the cancel and the offer reach the same tick).

function child(task_id: string, lanePath: string | null): ChildRecord {
  return { task_id, lane: lanePath === null ? null : { path: lanePath } } as unknown as ChildRecord;
}

describe('steward jobs: offers a batch-ending tick left undecided', () => {
  it('removes each lane the record does not name, and only those', async () => {
    const discarded: [string, string, string][] = [];
    const lines: [string, Record<string, unknown>][] = [];
    const store = {
      journal: (event: string, fields: Record<string, unknown> = {}) => lines.push([event, fields]),
    } as unknown as CoordinatorStorePort;
    const steward = {
      laneBranch: (task: string) => `lane/b/${task}`,
      discard: async (task: string, branch: string, batchBranch: string) => {
        discarded.push([task, branch, batchBranch]);
        return null;
      },
    } as unknown as Steward;
    const jobs = stewardJobs(steward, store);
    jobs.discardUndecided(
      [
        { task_id: 't1', path: '/lanes/t1' }, // (pending in the record: never admitted)
        { task_id: 't2', path: '/lanes/t2' }, // (the record has this lane: admitted before)
        { task_id: 't3', path: '/lanes/t3' }, // (the record names another lane of t3)
      ],
      [child('t1', null), child('t2', '/lanes/t2'), child('t3', '/elsewhere/t3')],
    );
    await jobs.idle();
    expect(discarded).toEqual([
      ['t1', 'lane/b/t1', 'batch/b'],
      ['t3', 'lane/b/t3', 'batch/b'],
    ]);
    expect(lines).toEqual([
      ['lane-discarded', { task: 't1', why: 'offered, the batch ended first' }],
      ['lane-discarded', { task: 't3', why: 'offered, the batch ended first' }],
    ]);
  });
});
