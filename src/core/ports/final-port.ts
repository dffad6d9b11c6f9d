import type { CheckRun } from '../records/kernel.js';
import type { AcceptanceCheck } from '../plan/plan.js';

/** What the final verification needs beyond the GitPort (docs/DECISIONS.md "Final verification"). */
export interface FinalPort {
  /** Runs the checks in a scratch checkout of `commit` (files copied, setup run); output kept in the logs. */
  runChecks(commit: string, checks: readonly AcceptanceCheck[], label: string): Promise<CheckRun[]>;
  /** The tree of `head` plus the change laneBase→laneCommit (a cherry-pick by merge-tree), or the conflicts. */
  replayTree(
    head: string,
    laneBase: string,
    laneCommit: string,
  ): Promise<{ tree: string } | { conflicts: string[] }>;
  /** Points `ref` at `commit` (no compare: the ref is lanes' own). */
  keepRef(ref: string, commit: string): Promise<void>;
  dropRef(ref: string): Promise<void>;
  /** Puts an evicted lane back to fix: the worktree at `path` on its branch at the lane base, the lane commit's change uncommitted in it. */
  restoreLane(lane: { path: string; branch: string; base_head: string; lane_commit: string }): Promise<void>;
  /** Takes a skipped dependent's lane away: its lane commit kept under `keep`, the worktree (if clean) and branch removed. */
  retireLane(lane: { path: string; branch: string; lane_commit: string | null }, keep: string): Promise<void>;
}
