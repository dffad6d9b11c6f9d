import type { OfferFacts } from '../../src/core/ports/git-port.js';
import type { CoordinatorStorePort } from '../../src/core/ports/store-port.js';
import type { BatchRecord } from '../../src/core/records/record.js';
import { StewardJobs } from '../../src/coordinator/lanes/steward-jobs.js';
import type { StewardJobsDeps } from '../../src/coordinator/lanes/steward-jobs.js';
import type { Steward } from '../../src/coordinator/lanes/steward.js';
import type { Host } from '../../src/hosts/host.js';

/**
 * StewardJobs for a unit test of batch `b`: the steward and the store are the test's own
 * stand-ins (only what the test's jobs call), every notification a no-op unless given.
 */
export function stewardJobs(
  steward: Partial<Steward>,
  store: Partial<CoordinatorStorePort>,
  deps: Partial<StewardJobsDeps> = {},
): StewardJobs {
  return new StewardJobs({
    steward: steward as Steward,
    store: store as CoordinatorStorePort,
    host: {} as Host,
    batchBranch: 'batch/b',
    wake: () => {},
    provisioned: () => {},
    released: () => {},
    notice: () => {},
    offerFacts: async () => {
      throw new Error('offerFacts: not asked in this test');
    },
    ...deps,
  });
}

/** What the jobs read of the record: a batch head at `head` (nothing integrated yet). */
export function recordAt(head: string): BatchRecord {
  return { base_head: head, commits: [], adopted_heads: [] } as unknown as BatchRecord;
}

/** git's facts of a clean lane of `t1` at `head`, found at `realpath`. */
export function cleanLaneFacts(head: string, realpath: string): OfferFacts {
  return { realpath, sameRepository: true, isWorktreeRoot: true, branch: 'lane/b/t1', head, clean: true };
}
