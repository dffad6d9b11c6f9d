import type {
  CommitSummary,
  DeliveryIds,
  GitPort,
  LaneLook,
  OfferFacts,
  ReworkOutcome,
} from '../../core/ports/git-port.js';
import type { MachineRouter } from './router.js';

// The GitPort over the coordinator's repository and the machines' caches. What takes a lane
// path or a lane branch a machine holds is that machine's op (the delivery commit is made
// there and fetched back); the batch branch, merges, integration commits and the
// compare-and-swap are the coordinator's, exactly as without machines (one writer).

export class RoutedGit implements GitPort {
  constructor(
    private readonly local: GitPort,
    private readonly router: MachineRouter,
  ) {}

  get coordinatorRoot(): string {
    return this.local.coordinatorRoot;
  }

  branchTip(branch: string): Promise<string | null> {
    const m = this.router.byBranch(branch);
    return m ? m.op('wt.branchTip', { branch }, branch) : this.local.branchTip(branch);
  }

  isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    return this.local.isAncestor(ancestor, descendant);
  }

  commitsBetween(from: string, to: string): Promise<CommitSummary[]> {
    return this.local.commitsBetween(from, to);
  }

  worktreesOnBranch(branch: string): Promise<string[]> {
    return this.local.worktreesOnBranch(branch);
  }

  offerFacts(path: string): Promise<OfferFacts> {
    const m = this.router.byPath(path);
    return m ? m.op('git.offerFacts', { path }) : this.local.offerFacts(path);
  }

  lookAtLane(path: string, options: { clean?: boolean } = {}): Promise<LaneLook> {
    const m = this.router.byPath(path);
    if (!m) return this.local.lookAtLane(path, options);
    return m.op('git.lookAtLane', { path, ...(options.clean === undefined ? {} : { clean: options.clean }) });
  }

  refresh(): void {
    this.local.refresh?.();
  }

  changedPaths(lanePath: string, base: string): Promise<string[]> {
    const m = this.router.byPath(lanePath);
    return m ? m.op('git.changedPaths', { lanePath, base }) : this.local.changedPaths(lanePath, base);
  }

  findDelivery(lanePath: string, branch: string, ids: DeliveryIds): Promise<string | null> {
    const m = this.router.byPath(lanePath) ?? this.router.byBranch(branch);
    return m
      ? m.op('git.findDelivery', { lanePath, branch, ids }, branch)
      : this.local.findDelivery(lanePath, branch, ids);
  }

  commitDelivery(lanePath: string, branch: string, paths: string[], goal: string, ids: DeliveryIds) {
    const m = this.router.byPath(lanePath);
    return m
      ? m.op<string>('git.commitDelivery', { lanePath, branch, paths, goal, ids }, branch)
      : this.local.commitDelivery(lanePath, branch, paths, goal, ids);
  }

  async stageDelivery(lanePath: string, base: string, paths: readonly string[]): Promise<void> {
    // (a machine builds its delivery when it commits it: nothing to start early here)
    if (!this.router.byPath(lanePath)) await this.local.stageDelivery?.(lanePath, base, paths);
  }

  async syncLaneIndex(lanePath: string, commit: string): Promise<void> {
    const m = this.router.byPath(lanePath);
    if (m) await m.op('git.syncLaneIndex', { lanePath, commit });
    else await this.local.syncLaneIndex(lanePath, commit);
  }

  mergeTree(head: string, laneCommit: string) {
    return this.local.mergeTree(head, laneCommit);
  }

  sameChange(base: string, laneCommit: string, head: string, tree: string): Promise<boolean> {
    return this.local.sameChange(base, laneCommit, head, tree);
  }

  integrationCommit(tree: string, parent: string, laneCommit: string, extraTrailers: string) {
    return this.local.integrationCommit(tree, parent, laneCommit, extraTrailers);
  }

  advanceBranch(branch: string, next: string, expected: string): Promise<boolean> {
    return this.local.advanceBranch(branch, next, expected);
  }

  withScratchCheckout<T>(commit: string, dir: string, fn: (path: string) => Promise<T>): Promise<T> {
    return this.local.withScratchCheckout(commit, dir, fn);
  }

  reworkLane(
    lanePath: string,
    branch: string,
    head: string,
    ids: { batch: string; task: string; base: string },
  ): Promise<ReworkOutcome> {
    const m = this.router.byPath(lanePath);
    return m
      ? m.op('git.reworkLane', { lanePath, branch, head, ids }, branch)
      : this.local.reworkLane(lanePath, branch, head, ids);
  }

  conflictMarkers(lanePath: string, paths: readonly string[]): Promise<string[]> {
    const m = this.router.byPath(lanePath);
    return m ? m.op('git.conflictMarkers', { lanePath, paths }) : this.local.conflictMarkers(lanePath, paths);
  }
}
