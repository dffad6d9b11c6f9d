import type { OfferFacts } from '../../core/ports/git-port.js';
import type { CoordinatorStorePort } from '../../core/ports/store-port.js';
import { expectedHead } from '../../core/steps/lineage.js';
import type { Handoff } from '../../core/records/report.js';
import type { ChildRecord } from '../../core/records/record.js';
import type { Host } from '../../hosts/host.js';
import { HeldFailure, metAwayMachine } from './held-failure.js';
import { LaneJobs } from './lane-jobs.js';
import { ReleaseJobs } from './release-jobs.js';
import { FACTS_FRESH_MS } from './offer.js';
import type { Facts, Failure, Offer } from './offer.js';
import type { Steward } from './steward.js';

export type { Failure, Offer } from './offer.js';

// The steward's handoffs carried out beside the loop (DESIGN §7): the loop queues them and
// goes on; each finished job leaves an offer or a failure for the next tick and wakes the
// loop. A child's jobs run in order, one at a time (LaneJobs): making its lane or moving a
// refused one to the head (`provision:<child>`), moving a waiting one (`move:<child>`),
// removing one made ahead that is not needed (`discard:<child>`), and its release
// (`release:<child>`, release-jobs.ts).

type ProvisionHandoff = Extract<Handoff, { action: 'provision' }>;

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
  /** The admission's facts about a lane (GitPort.offerFacts), read by the job that made it. */
  offerFacts: (path: string) => Promise<OfferFacts>;
}

type Made =
  | { kind: 'offer'; path: string; branch: string; facts: Facts; machine: string }
  | { kind: 'failed'; reason: string };

export class StewardJobs {
  private offers: Offer[] = [];
  private failures: Failure[] = [];
  /** Lanes made ahead (DESIGN §7), by child: what each job made, kept until its handoff. */
  private readonly ahead = new Map<string, Made>();
  /** The children that take the next free slots, in that order (keepAhead). */
  private nextOrder: string[] = [];
  /**
   * Children whose lane a job is making, and what becomes of it once made: `hand` (its
   * provision handoff came: offered), `ahead` (kept for its handoff), `discard` (the last
   * report no longer counts it among the next: removed again).
   */
  private readonly making = new Map<string, 'hand' | 'ahead' | 'discard'>();
  private readonly failure = new HeldFailure();
  private readonly jobs: LaneJobs;
  /** Releases of integrated lanes (release-jobs.ts), queued on the same jobs. */
  readonly releases: ReleaseJobs;

  constructor(private readonly deps: StewardJobsDeps) {
    this.jobs = new LaneJobs(
      (_key, error) => {
        // (a job that met an away machine is done again by the next tick's handoff)
        this.failure.holdUnlessAway(error);
        deps.wake();
      },
      () => deps.wake(), // (a kept release or a lane made ahead wakes nothing else)
    );
    this.releases = new ReleaseJobs(this.jobs, deps);
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
    this.failure.throwHeld();
    const offers = this.offers.splice(0);
    const setupFailures = this.failures.splice(0);
    if (offers.length > 0) await this.bringToHead(this.head(), offers);
    return { offers, setupFailures };
  }

  /**
   * Each lane moves only itself (its own HEAD and branch), after any move of it already
   * under way (headMoved), which most often left it at the head already.
   */
  private async bringToHead(head: string, offers: readonly Offer[]): Promise<void> {
    await Promise.all(
      offers.map(async (offer) => {
        await this.jobs.doneWith(offer.task_id);
        // A lane that cannot move is offered as it is: the tick refuses it and says why.
        // (a lane whose machine stopped answering is offered unmoved: the tick leaves it)
        const brought = await this.moveLane(offer.task_id, offer.path, head, 'lane-provisioned').catch(
          (error: unknown) => {
            if (metAwayMachine(error)) return 'refused' as const;
            throw error;
          },
        );
        // (a clean lane moved by `reset --keep` is still clean: only its HEAD is new)
        const fresh = offer.facts && performance.now() - offer.facts.readAt < FACTS_FRESH_MS;
        if (brought !== 'refused' && fresh) offer.facts = { ...offer.facts!, head };
        else delete offer.facts; // (read again by the admission)
      }),
    );
  }

  /**
   * The tick under way has integrated (`integrated` children, the batch branch now at
   * `head`): the lanes offered and not yet taken, and the lanes made ahead for the slots
   * those children free (the first ones), are brought to the new head beside the tick, so
   * that the next tick finds them there instead of moving them first (take).
   */
  headMoved(head: string, integrated: number): void {
    // (in the order the children take the free slots: the jobs finish in any order)
    const rank = (task: string) => this.nextOrder.indexOf(task);
    const made = [...this.ahead]
      .flatMap(([task, m]) => (m.kind === 'offer' ? [[task, m.path] as const] : []))
      .sort(([a], [b]) => rank(a) - rank(b));
    const offered = this.offers.map((o) => [o.task_id, o.path] as const);
    for (const [task, path] of [...offered, ...made.slice(0, integrated)])
      this.jobs.push(`move:${task}`, async () => void (await this.moveLane(task, path, head, 'lane-moved')));
  }

  /** Brings a lane to `head` (nothing when it is there), journaled as `event` when it moved. */
  private async moveLane(
    task: string,
    path: string,
    head: string,
    event: 'lane-provisioned' | 'lane-moved',
  ): Promise<'at-base' | 'moved' | 'refused'> {
    const brought = await this.deps.steward.bringToBase(path, head);
    if (brought === 'moved') this.deps.store.journal(event, { task, path, moved_to: head });
    return brought;
  }

  /** A failure the loop itself found (a refused lane that cannot be moved): to the next tick. */
  fail(failure: Failure): void {
    this.failures.push(failure);
    this.deps.wake();
  }

  provision(h: ProvisionHandoff): void {
    const task = h.task_id;
    // A report from a tick that began before this child's offer or failure was left: the
    // next tick decides that one first.
    if (this.pending(task) || this.making.get(task) === 'hand') return;
    const made = this.ahead.get(task);
    if (made) {
      this.ahead.delete(task);
      this.deps.store.journal('lane-requested', { task });
      return this.hand(task, made);
    }
    // A lane being made ahead is handed over by its job when done; any other provisioning
    // job out for the child (a move to the head) offers the lane itself.
    if (this.making.has(task)) this.making.set(task, 'hand');
    else if (!this.queueMake(task, h.lane_branch, 'hand', h.machine)) return;
    this.deps.store.journal('lane-requested', { task });
  }

  /**
   * Lanes made ahead for `next` (core/schedule.ts nextToStart), the children that take the
   * next free slots: each is made now and offered at its handoff, so a freed slot waits only
   * for the offer. A lane made ahead for a child no longer among them (dropped, the budget
   * spent, dispatch paused, the batch stopped) is removed again.
   */
  keepAhead(next: readonly { task_id: string; lane_branch: string; machine?: string }[]): void {
    this.nextOrder = next.map((n) => n.task_id);
    const keep = new Set(this.nextOrder);
    for (const [task, made] of this.ahead) {
      if (keep.has(task)) continue;
      this.ahead.delete(task);
      if (made.kind === 'offer') this.discard(task, made.branch);
    }
    for (const [task, then] of this.making)
      if (then !== 'hand') this.making.set(task, keep.has(task) ? 'ahead' : 'discard');
    for (const n of next) {
      if (this.ahead.has(n.task_id) || this.pending(n.task_id) || this.making.has(n.task_id)) continue;
      this.queueMake(n.task_id, n.lane_branch, 'ahead', n.machine);
    }
  }

  /** Makes the child's lane (at the head as the record has it when the job runs); false when a job for it is out. */
  private queueMake(task: string, laneBranch: string, then: 'hand' | 'ahead', machine = 'local'): boolean {
    const queued = this.jobs.push(`provision:${task}`, async () => {
      let made: Made;
      let fate: 'hand' | 'ahead' | 'discard' = then;
      try {
        const handoff = {
          action: 'provision' as const,
          task_id: task,
          lane_branch: laneBranch,
          base_head: this.head(),
          machine, // (where placement put it: the steward makes the lane there)
        };
        const result = await this.deps.steward.provision(handoff, then === 'ahead');
        made =
          result.kind === 'offer'
            ? {
                kind: 'offer',
                path: result.path,
                branch: laneBranch,
                machine,
                facts: result.facts
                  ? { ...result.facts, readAt: performance.now() }
                  : await this.factsOf(result.path),
              }
            : { kind: 'failed', reason: result.reason };
      } finally {
        fate = this.making.get(task) ?? then;
        this.making.delete(task);
      }
      if (fate === 'hand') return this.hand(task, made);
      if (made.kind === 'offer') this.deps.store.journal('lane-made-ahead', { task, path: made.path });
      if (fate === 'ahead') this.ahead.set(task, made);
      else if (made.kind === 'offer') this.discard(task, made.branch);
    });
    if (queued) this.making.set(task, then);
    return queued;
  }

  /** A made lane (or its failure) to the next tick. */
  private hand(task: string, made: Made): void {
    if (made.kind === 'offer') {
      this.offers.push({
        task_id: task,
        path: made.path,
        facts: made.facts,
        ...(made.machine !== 'local' ? { machine: made.machine } : {}),
      });
      this.deps.store.journal('lane-provisioned', { task, path: made.path });
      this.deps.provisioned(task, made.path);
    } else this.failures.push({ task_id: task, reason: made.reason });
    this.deps.wake();
  }

  /**
   * Offers a tick took and then ended the batch before its admission (a cancel, a broken
   * lineage): the lanes the record does not name are removed, as lanes made ahead and not
   * needed are (docs/RELIABILITY.md, adversarial pass 13).
   */
  discardUndecided(offers: readonly Offer[], children: readonly ChildRecord[]): void {
    const named = new Set(children.flatMap((c) => (c.lane ? [`${c.task_id}\0${c.lane.path}`] : [])));
    for (const { task_id: task, path } of offers)
      if (!named.has(`${task}\0${path}`))
        this.discard(task, this.deps.steward.laneBranch(task), 'offered, the batch ended first');
  }

  private discard(task: string, branch: string, why = 'made ahead, not needed now'): void {
    // Queued after the job that made it; a handoff meanwhile queues a new lane after this.
    this.jobs.push(`discard:${task}`, async () => {
      const kept = await this.deps.steward.discard(task, branch, this.deps.batchBranch);
      if (kept) this.deps.notice(`${task}: ${kept}`);
      else this.deps.store.journal('lane-discarded', { task, why });
      this.deps.wake();
    });
  }

  /** A refused lane moved to the head; journaled with its offer, as hand() does (DECISIONS). */
  moveToHead(taskId: string, path: string): void {
    this.jobs.push(`provision:${taskId}`, async () => {
      const machine = this.deps.steward.machineOfLane(path);
      const head = this.head();
      const brought = await this.deps.steward.bringToBase(path, head);
      if (brought !== 'refused') {
        const facts = await this.factsOf(path);
        this.offers.push({ task_id: taskId, path, facts, ...(machine !== 'local' ? { machine } : {}) });
        if (brought === 'moved')
          this.deps.store.journal('lane-provisioned', { task: taskId, path, moved_to: head });
      } else this.failures.push({ task_id: taskId, reason: 'lane refused: batch_lane_base_mismatch' });
      this.deps.wake();
    });
  }

  private async factsOf(path: string): Promise<Facts> {
    return { ...(await this.deps.offerFacts(path)), readAt: performance.now() };
  }

  private pending(taskId: string): boolean {
    return [...this.offers, ...this.failures].some((o) => o.task_id === taskId);
  }

  private head(): string {
    return expectedHead(this.deps.store.readRecord());
  }
}
