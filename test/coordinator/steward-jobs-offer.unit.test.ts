import { describe, expect, it } from 'vitest';
import type { OfferFacts } from '../../src/core/ports/git-port.js';
import type { CoordinatorStorePort } from '../../src/core/ports/store-port.js';
import { cleanLaneFacts, recordAt, stewardJobs } from '../helpers/steward-jobs.js';
import type { Steward } from '../../src/coordinator/lanes/steward.js';

// `lane-provisioned` in the journal says a lane is offered: the first tick that begins after
// the line decides it (coordinator.test "never runs more than --parallel lanes" checks it on
// every offer of a real batch). A lane refused for a head that moved is moved by a job that
// then reads its facts from git; a tick can begin and end while that read is out. Its line
// must not come before its offer, or that tick passes the offer by.

const HEAD = 'b'.repeat(40);
const FACTS = cleanLaneFacts(HEAD, '/lanes/t1');

describe('steward jobs: a refused lane moved to the head', () => {
  it('is journaled as provisioned only once its offer is there for the next tick', async () => {
    const lines: { event: string; fields: Record<string, unknown> }[] = [];
    const store = {
      readRecord: () => recordAt(HEAD),
      journal: (event: string, fields: Record<string, unknown> = {}) => lines.push({ event, fields }),
    } as unknown as CoordinatorStorePort;
    let moves = 0;
    const steward = {
      machineOfLane: () => 'local',
      // (moved by the job; at the head already when the loop brings the offer there)
      bringToBase: async () => (++moves === 1 ? 'moved' : 'at-base'),
    } as unknown as Steward;
    let asked!: () => void;
    const askedFacts = new Promise<void>((resolve) => (asked = resolve));
    let answer!: (facts: OfferFacts) => void;
    const jobs = stewardJobs(steward, store, {
      offerFacts: () => {
        asked();
        return new Promise((resolve) => (answer = resolve));
      },
    });
    const provisioned = () => lines.filter((l) => l.event === 'lane-provisioned');

    jobs.moveToHead('t1', '/lanes/t1');
    await askedFacts; // (the lane is moved; git is asked for its facts)
    // A tick begins now: it is handed no offer, so no line may say there is one.
    const early = await jobs.take();
    expect(early.offers).toEqual([]);
    expect(provisioned(), 'lane-provisioned before its offer was left').toEqual([]);

    answer(FACTS);
    await jobs.idle();
    expect(provisioned()).toEqual([
      { event: 'lane-provisioned', fields: { task: 't1', path: '/lanes/t1', moved_to: HEAD } },
    ]);
    const next = await jobs.take();
    expect(next.offers.map((o) => [o.task_id, o.path, o.facts?.head])).toEqual([['t1', '/lanes/t1', HEAD]]);
    expect(provisioned()).toHaveLength(1); // (at the head already: not moved, not journaled again)
  });
});
