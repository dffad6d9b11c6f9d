import type { CoordinatorStorePort } from '../core/ports.js';
import { expectedHead } from '../core/lineage.js';
import type { Handoff } from '../core/report.js';
import type { Host } from '../hosts/host.js';
import { LaneJobs } from './lane-jobs.js';
import type { Steward } from './steward.js';

// The steward's handoffs carried out beside the loop (DESIGN §7): the loop queues them and
// goes on; each finished job leaves an offer or a failure for the next tick and wakes the
// loop. A child has at most one provisioning job out (`provision:<child>`: a new lane, or
// a refused lane moved to the head) and one release job (`release:<child>`).

export type Offer = { task_id: string; path: string };
export type Failure = { task_id: string; reason: string };

type ProvisionHandoff = Extract<Handoff, { action: 'provision' }>;
type ReleaseHandoff = Extract<Handoff, { action: 'release' }>;

export interface StewardJobsDeps {
  steward: Steward;
  store: CoordinatorStorePort;
  host: Host;
  batchBranch: string;
  /** A job finished: the loop should tick. */
  wake: () => void;
  provisioned: (task: string, path: string) => void;
  released: (task: string) => void;
  notice: (text: string) => void;
}

export class StewardJobs {
  private offers: Offer[] = [];
  private failures: Failure[] = [];
  private failure: unknown = null;
  private readonly jobs: LaneJobs;

  constructor(private readonly deps: StewardJobsDeps) {
    this.jobs = new LaneJobs((_key, error) => {
      this.failure ??= error;
      deps.wake();
    });
  }

  /** Jobs queued or running: the loop does not end while one is out. */
  get busy(): boolean {
    return this.jobs.busy;
  }

  idle(): Promise<void> {
    return this.jobs.idle();
  }

  /**
   * What finished jobs left for the next tick, each offered lane first brought to the batch
   * head as the record has it now: a tick may have integrated while the job ran, and a lane
   * on an older head would only be refused (DESIGN §7). A job that threw throws here, in the loop.
   */
  async take(): Promise<{ offers: Offer[]; setupFailures: Failure[] }> {
    if (this.failure !== null) {
      const error = this.failure;
      this.failure = null;
      throw error;
    }
    const offers = this.offers.splice(0);
    const setupFailures = this.failures.splice(0);
    if (offers.length > 0) {
      const head = this.head();
      await Promise.all(offers.map((offer) => this.bringToHead(offer, head)));
    }
    return { offers, setupFailures };
  }

  /** (Each lane moves only itself: its own HEAD and branch, beside the other jobs.) */
  private async bringToHead(offer: Offer, head: string): Promise<void> {
    const { task_id: task, path } = offer;
    // A lane that cannot move is offered as it is: the tick refuses it and says why.
    if ((await this.deps.steward.bringToBase(path, head)) === 'moved')
      this.deps.store.journal('lane-provisioned', { task, path, moved_to: head });
  }

  /** A failure the loop itself found (a refused lane that cannot be moved): to the next tick. */
  fail(failure: Failure): void {
    this.failures.push(failure);
    this.deps.wake();
  }

  provision(h: ProvisionHandoff): void {
    // A report from a tick that began before this child's offer or failure was left: the
    // next tick decides that one first.
    if (this.pending(h.task_id)) return;
    const queued = this.jobs.push(`provision:${h.task_id}`, async () => {
      // The head as the record has it now (a tick may have integrated since the report).
      const result = await this.deps.steward.provision({ ...h, base_head: this.head() });
      if (result.kind === 'offer') {
        this.offers.push({ task_id: h.task_id, path: result.path });
        this.deps.store.journal('lane-provisioned', { task: h.task_id, path: result.path });
        this.deps.provisioned(h.task_id, result.path);
      } else this.failures.push({ task_id: h.task_id, reason: result.reason });
      this.deps.wake();
    });
    if (queued) this.deps.store.journal('lane-requested', { task: h.task_id });
  }

  /** A lane refused for a batch head that moved: moved to the head as it is when the job runs. */
  moveToHead(taskId: string, path: string): void {
    this.jobs.push(`provision:${taskId}`, async () => {
      const head = this.head();
      if (await this.deps.steward.moveToBase(path, head)) {
        this.offers.push({ task_id: taskId, path });
        this.deps.store.journal('lane-provisioned', { task: taskId, path, moved_to: head });
      } else this.failures.push({ task_id: taskId, reason: 'lane refused: batch_lane_base_mismatch' });
      this.deps.wake();
    });
  }

  private pending(taskId: string): boolean {
    return [...this.offers, ...this.failures].some((o) => o.task_id === taskId);
  }

  private head(): string {
    return expectedHead(this.deps.store.readRecord());
  }

  /** Children whose release job is queued or running. */
  releasing(): string[] {
    return this.jobs.keysWith('release:');
  }

  release(h: ReleaseHandoff, commit: string): void {
    this.jobs.push(`release:${h.task_id}`, async () => {
      const kept = await this.deps.steward.release(h, commit, this.deps.batchBranch);
      if (kept) return this.deps.notice(`${h.task_id}: ${kept}`);
      this.deps.released(h.task_id);
      // Integrated and released: what the host keeps for the lane (its Herdr tab) goes too.
      await this.deps.host.closeLane?.(h.task_id, h.lane_path);
      this.deps.wake();
    });
  }
}
