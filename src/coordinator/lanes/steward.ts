import { basename, join, resolve } from 'node:path';
import type { Config } from '../../core/settings/config.js';
import { laneBranch } from '../../core/basics/ids.js';
import { mayMoveToBase, provisionFailure, provisionStep } from '../../core/rules/lane-provision.js';
import type { LaneSpot } from '../../core/rules/lane-provision.js';
import { releaseStep } from '../../core/rules/lane-release.js';
import type { OfferFacts } from '../../core/ports/git-port.js';
import type { WorktreePort } from '../../core/ports/worktree-port.js';
import { crashPoint } from '../../process/crash-points.js';
import type { Handoff } from '../../core/records/report.js';
import { prepareCheckout } from '../../qa/lane-setup.js';

// The steward creates and removes lane worktrees when a tick asks (DESIGN §7), through the
// WorktreePort. It never deletes work that is not integrated: a worktree goes only when it
// is clean and its integration commit is on the batch branch.

export type ProvisionResult =
  /** `facts`: what admission would read, when the steward knows it without asking git. */
  | { kind: 'offer'; taskId: string; path: string; facts?: OfferFacts }
  | { kind: 'failed'; taskId: string; reason: string };

/**
 * The machines lanes are made on (absent: every lane local). A lane on a machine lives at
 * the path the link gives (`<root>/lanes/<machine>/<repo id>/<batch>/<child>` there), and
 * its copy_files and setup run there.
 */
export interface StewardMachines {
  /** The lane path of a child on a machine, or null for the coordinator's own machine. */
  lanePath(machine: string, taskId: string): string | null;
  /** The machine a lane path is on ("local" for the coordinator's). */
  machineOf(path: string): string;
  /** Readies a lane on a machine: null, or why it failed. */
  prepare(path: string, logPathFor: (name: string) => string): Promise<string | null>;
}

export class Steward {
  /** The machine each child's lane was last made on (a discard finds it there). */
  private readonly machineOfTask = new Map<string, string>();

  constructor(
    private readonly repoRoot: string,
    private readonly batchId: string,
    private readonly config: Config,
    private readonly logDirFor: (taskId: string) => string,
    private readonly worktrees: WorktreePort,
    private readonly machines?: StewardMachines,
  ) {}

  /** The branch of a child's lane (`lane/<batch>/<child>`). */
  laneBranch(taskId: string): string {
    return laneBranch(this.batchId, taskId);
  }

  /** The machine a lane path is on. */
  machineOfLane(path: string): string {
    return this.machines?.machineOf(path) ?? 'local';
  }

  /**
   * Where a child's lane lives: on a machine, where the link says; else the configured
   * lanes root with {repo}, {batch}, {child} filled.
   */
  lanePath(taskId: string, machine = this.machineOfTask.get(taskId) ?? 'local'): string {
    const remote = machine !== 'local' ? (this.machines?.lanePath(machine, taskId) ?? null) : null;
    if (remote !== null) return remote;
    const template = this.config.lanes_root;
    const filled = template
      .replaceAll('{repo}', basename(this.repoRoot))
      .replaceAll('{batch}', this.batchId)
      .replaceAll('{child}', taskId);
    const path = resolve(this.repoRoot, filled);
    return template.includes('{child}') ? path : join(path, taskId);
  }

  /**
   * `ahead`: a lane made before its child's turn (DESIGN §7, "Lanes made ahead"). With no
   * files to copy and no setup to run it is made without a checkout: every offer is brought
   * to the batch head first (bringToBase), which checks it out there, so the files are
   * written once instead of twice.
   */
  async provision(h: Extract<Handoff, { action: 'provision' }>, ahead = false): Promise<ProvisionResult> {
    this.machineOfTask.set(h.task_id, h.machine);
    const path = this.lanePath(h.task_id, h.machine);
    const failed = (reason: string): ProvisionResult => ({
      kind: 'failed',
      taskId: h.task_id,
      reason: provisionFailure(reason),
    });
    const step = provisionStep(
      { path, branch: h.lane_branch, base: h.base_head },
      await this.spotAt(path, h),
    );
    if (step.kind === 'fail') return failed(step.reason);
    // (a lane left from before a crash may still wait for its checkout: done before anyone looks)
    if (step.kind === 'reuse' || step.kind === 'move-to-base') {
      if (!(await this.moveToBase(path, h.base_head)))
        return failed(step.kind === 'move-to-base' ? step.ifRefused : `${path} could not be checked out`);
    }
    const bare = this.config.copy_files.length === 0 && this.config.setup.length === 0;
    if (step.kind === 'add') {
      const checkout = !(ahead && bare);
      const why = await this.worktrees.add(path, h.lane_branch, h.base_head, step.branchExists, checkout);
      if (why !== null) return failed(why);
      crashPoint('after-worktree-add', h.task_id);
    }
    const logPathFor = (name: string) => join(this.logDirFor(h.task_id), `${name}.log`);
    const notReady =
      h.machine !== 'local' && this.machines
        ? bare
          ? null
          : await this.machines.prepare(path, logPathFor)
        : await prepareCheckout(this.repoRoot, path, this.config, logPathFor);
    if (notReady) return failed(notReady);
    // A worktree `git worktree add` has just made, with nothing copied or run in it, is clean,
    // on its branch, at the base (once checked out): its admission needs no status read for that.
    const untouched = step.kind === 'add' && bare;
    const realpath = untouched ? await this.worktrees.realpath(path) : null;
    if (realpath === null) return { kind: 'offer', taskId: h.task_id, path };
    const facts: OfferFacts = {
      realpath,
      sameRepository: true,
      isWorktreeRoot: true,
      branch: h.lane_branch,
      head: h.base_head,
      clean: true,
    };
    return { kind: 'offer', taskId: h.task_id, path, facts };
  }

  /** What is at a lane's path (src/core/lane-provision.ts decides what to do with it). */
  private async spotAt(path: string, h: Extract<Handoff, { action: 'provision' }>): Promise<LaneSpot> {
    const wt = this.worktrees;
    if (await wt.exists(path)) {
      // Only a path that exists can be a lane left from before a crash: no worktree listing
      // (a git call per provision) for the usual new lane.
      const tree = await wt.at(path);
      if (!tree) return { kind: 'not-a-worktree' };
      return { kind: 'worktree', branch: tree.branch, head: tree.head, clean: await wt.isClean(path) };
    }
    const branchTip = await wt.branchTip(h.lane_branch);
    const tipOnBase = branchTip !== null && (await wt.onBranch(branchTip, h.base_head));
    return { kind: 'free', branchTip, tipOnBase };
  }

  /**
   * Moves an unused lane to a new base on its own branch (after batch_lane_base_mismatch).
   * `reset --keep` refuses when a file it would change has changes of the lane's own, so no
   * status is read first; the lane is offered again and admission looks at it anyway.
   */
  async moveToBase(path: string, base: string): Promise<boolean> {
    return (await this.bringToBase(path, base)) !== 'refused';
  }

  /**
   * moveToBase without a process when the lane is at the base already (and checked out: one
   * made without a checkout is checked out at the base here).
   */
  async bringToBase(path: string, base: string): Promise<'at-base' | 'moved' | 'refused'> {
    const head = await this.worktrees.headOf(path);
    const unpopulated = await this.worktrees.isUnpopulated(path);
    if (head === base && !unpopulated) return 'at-base';
    const onBase = head !== null && (head === base || (await this.worktrees.onBranch(head, base)));
    if (!mayMoveToBase(head, onBase) || !(await this.worktrees.resetKeep(path, base))) return 'refused';
    return head === base ? 'at-base' : 'moved';
  }

  /**
   * Removes a lane made ahead for a child that will not start now (DESIGN §7, "Lanes made
   * ahead"): only a clean worktree on the child's branch, and the branch only while all of
   * it is on the batch branch. A lane with anything of its own stays; null, or why it stays.
   */
  async discard(taskId: string, branch: string, batchBranch: string): Promise<string | null> {
    const wt = this.worktrees;
    const path = this.lanePath(taskId);
    if (!(await wt.exists(path))) return null;
    if (!(await wt.isClean(path))) return `${path} has changes: left as it is`;
    const [tip, batchTip] = await Promise.all([wt.branchTip(branch), wt.branchTip(batchBranch)]);
    if (tip === null || batchTip === null || !(await wt.onBranch(tip, batchTip)))
      return `${branch} has commits that are not on ${batchBranch}: left as it is`;
    // The worktree first: a crash between the two leaves the branch on the base, which the
    // child's next provision takes up again (a lane left detached would only be refused).
    const why = await wt.remove(path);
    if (why !== null) return why;
    await wt.deleteBranch(path, branch);
    return null;
  }

  /**
   * Removes an integrated lane: only when clean and its commit is on the batch branch tip.
   * The remove is what checks it is clean (the tick's report does not look first: DESIGN
   * §7): proven from its files, else by `git worktree remove` without --force. A lane it
   * refuses gets its branch back and stays, and `changed` says it has changes of its own.
   * Null when the lane is gone.
   */
  async release(
    h: Extract<Handoff, { action: 'release' }>,
    integrationCommit: string,
    batchBranch: string,
  ): Promise<{ why: string; changed: boolean } | null> {
    const wt = this.worktrees;
    const laneExists = await wt.exists(h.lane_path);
    const batchTip = laneExists ? await wt.branchTip(batchBranch) : null;
    const integratedOnTip = batchTip !== null && (await wt.onBranch(integrationCommit, batchTip));
    const keepLaneBranches = this.config.keep_lane_branches;
    const step = releaseStep(h.task_id, batchBranch, {
      laneExists,
      batchTip,
      integratedOnTip,
      keepLaneBranches,
    });
    if (step.kind === 'gone') return null;
    if (step.kind === 'keep') return { why: step.why, changed: false };
    // The branch goes first (the lane detached from it): a crash between the two leaves
    // a lane the next release finds again, never a branch that nothing deletes any more.
    const tip = step.deleteBranch ? await wt.branchTip(h.lane_branch) : null;
    // A lane someone moved off its branch is left as it is until the remove goes through.
    const onIt = tip !== null && (await wt.branchAt(h.lane_path)) === h.lane_branch;
    if (onIt) await wt.deleteBranch(h.lane_path, h.lane_branch);
    const why = await wt.remove(h.lane_path);
    if (why === null) {
      crashPoint('after-worktree-remove', h.task_id);
      if (tip !== null && !onIt) await wt.deleteBranch(h.lane_path, h.lane_branch);
      return null;
    }
    if (!(await wt.exists(h.lane_path))) return { why, changed: false };
    if (onIt) await wt.restoreBranch(h.lane_path, h.lane_branch, tip);
    // (a worktree git cannot read any more says nothing of changes: kept for another reason)
    const clean = await wt.isClean(h.lane_path).catch(() => null);
    return { why, changed: clean === false };
  }
}
