import type { HandoffOf } from '../../core/records/report.js';
import type { LaneJobs } from './lane-jobs.js';
import type { Host } from '../../hosts/host.js';
import type { Steward } from './steward.js';

// The release of an integrated lane, carried out beside the loop (DESIGN §7, release): a
// job a child (`release:<child>`) on the steward's lane jobs. What a release left in place
// is remembered for the next ticks (TickInput.releasing, keptChanged).

/** What a release needs of the steward's jobs (StewardJobsDeps). */
export interface ReleaseDeps {
  steward: Steward;
  batchBranch: string;
  host: Host;
  notice: (text: string) => void;
  released: (task: string) => void;
  wake: () => void;
}

export class ReleaseJobs {
  constructor(
    private readonly jobs: LaneJobs,
    private readonly deps: ReleaseDeps,
  ) {}

  /** Children whose release job is queued or running. */
  releasing(): string[] {
    return this.jobs.keysWith('release:');
  }

  /** Integrated lanes a release left in place for changes of their own (TickInput.keptChanged). */
  private readonly keptChanged = new Set<string>();
  /**
   * Integrated lanes a release left in place for another reason (a locked worktree, the
   * integration not on the batch branch): said once, not asked for again by this
   * coordinator (a release repeated every tick would keep the loop from ever ending).
   */
  private readonly refused = new Set<string>();

  refusedOnes(): string[] {
    return [...this.refused];
  }

  keptForChanges(): string[] {
    return [...this.keptChanged];
  }

  release(h: HandoffOf<'release'>, commit: string): void {
    this.jobs.push(`release:${h.task_id}`, async () => {
      const kept = await this.deps.steward.release(h, commit, this.deps.batchBranch);
      // (kept for changes: asked for again once clean; for anything else: not in this run)
      if (kept) (kept.changed ? this.keptChanged : this.refused).add(h.task_id);
      if (kept) return this.deps.notice(`${h.task_id}: ${kept.why}`);
      this.keptChanged.delete(h.task_id);
      this.deps.released(h.task_id);
      // Integrated and released: what the host keeps for the lane (its Herdr tab) goes too.
      await this.deps.host.closeLane?.(h.task_id, h.lane_path);
      this.deps.wake();
    });
  }
}
