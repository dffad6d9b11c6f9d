import { describe, expect, it } from 'vitest';
import { LanesError } from '../../src/core/basics/errors.js';
import type { StewardJobs } from '../../src/coordinator/lanes/steward-jobs.js';
import { cleanLaneFacts, recordAt, stewardJobs } from '../helpers/steward-jobs.js';
import type { Steward } from '../../src/coordinator/lanes/steward.js';

// A lane job that meets a machine that stopped answering (machine_unreachable) is no
// failure of the batch: the pool has the machine reconnecting, and the next provision
// handoff (the tick hands it again while the child has no lane) makes the lane anew.
// Any other error of a job still ends the run where the loop takes the jobs' results.

const BASE = 'a'.repeat(40);
const store = { readRecord: () => recordAt(BASE), journal: () => {} };
const handoff = {
  action: 'provision' as const,
  task_id: 't1',
  lane_branch: 'lane/b/t1',
  base_head: BASE,
  machine: 'm1',
};

function jobsWith(
  provision: () => Promise<unknown>,
  bringToBase: () => Promise<string> = async () => 'at-base',
): StewardJobs {
  return stewardJobs({ provision, bringToBase } as unknown as Partial<Steward>, store, {
    offerFacts: async () => cleanLaneFacts(BASE, '/x'),
  });
}

describe('steward jobs and a machine away', () => {
  it('a provision that met an away machine is not held as a failure, and the next handoff makes the lane', async () => {
    let calls = 0;
    const jobs = jobsWith(async () => {
      calls += 1;
      if (calls === 1)
        throw new LanesError('machine_unreachable', 'machine m1: wt.add: connection closed', 1);
      return { kind: 'offer', taskId: 't1', path: '/m1/lanes/t1' };
    });
    jobs.provision(handoff);
    await jobs.idle();
    await expect(jobs.take()).resolves.toEqual({ offers: [], setupFailures: [] });
    jobs.provision(handoff); // (the next tick's handoff: the child still has no lane)
    await jobs.idle();
    const taken = await jobs.take();
    expect(taken.offers.map((o) => [o.task_id, o.path, o.machine])).toEqual([['t1', '/m1/lanes/t1', 'm1']]);
    expect(calls).toBe(2);
  });

  it('any other error of a job still ends the run', async () => {
    const jobs = jobsWith(async () => {
      throw new LanesError('git_failed', 'git worktree add failed', 1);
    });
    jobs.provision(handoff);
    await jobs.idle();
    await expect(jobs.take()).rejects.toThrow('git worktree add failed');
  });

  it('a made lane whose machine stopped answering before it was brought to the head is offered as it is', async () => {
    const jobs = jobsWith(
      async () => ({ kind: 'offer', taskId: 't1', path: '/m1/lanes/t1' }),
      async () => {
        throw new LanesError('machine_unreachable', 'machine m1: wt.resetKeep: connection closed', 1);
      },
    );
    jobs.provision(handoff);
    await jobs.idle();
    const taken = await jobs.take();
    // (its facts dropped: the tick, which knows the machine away, refuses it without asking)
    expect(taken.offers.map((o) => [o.task_id, o.machine, o.facts])).toEqual([['t1', 'm1', undefined]]);
  });
});
