import { join } from 'node:path';
import type { Config } from '../../core/settings/config.js';
import type { CheckRun } from '../../core/records/kernel.js';
import type { AcceptanceCheck } from '../../core/plan/plan.js';
import type { FinalPort } from '../../core/ports/final-port.js';
import { dropRef, keepRef } from '../../git/runner/commits.js';
import { replayTree, restoreLane, retireLane } from '../../git/batch/rebuild.js';
import type { RepoGit } from '../../git/ports/repo-git.js';
import { runChecks } from '../../qa/check-runner.js';
import { prepareCheckoutRun } from '../../qa/lane-setup.js';

// The FinalPort over a real repository: the final checks run in a scratch worktree of the
// commit under test, prepared like a lane (copy_files, then the setup commands), with
// every output kept under logs/final/<run>/ in the batch's state.

export class FinalRunner implements FinalPort {
  constructor(
    private readonly git: RepoGit,
    private readonly config: Pick<Config, 'copy_files' | 'setup'>,
    private readonly scratchDir: string,
    private readonly logDir: string,
  ) {}

  runChecks(commit: string, checks: readonly AcceptanceCheck[], label: string): Promise<CheckRun[]> {
    const logs = join(this.logDir, label);
    return this.git.withScratchCheckout(commit, this.scratchDir, async (dir) => {
      const setup = (name: string) => join(logs, `${name}.log`);
      const failed = await prepareCheckoutRun(this.git.root, dir, this.config, setup);
      // A setup that fails fails every check of this run: they cannot be trusted.
      if (failed) return checks.map((c) => ({ ...failed.run, id: c.id }));
      return runChecks(dir, checks, (check) => join(logs, `${check.id}.log`));
    });
  }

  replayTree(head: string, laneBase: string, laneCommit: string) {
    return replayTree(this.git.root, head, laneBase, laneCommit);
  }

  keepRef(ref: string, commit: string): Promise<void> {
    return keepRef(this.git.root, ref, commit);
  }

  dropRef(ref: string): Promise<void> {
    return dropRef(this.git.root, ref);
  }

  restoreLane(lane: { path: string; branch: string; base_head: string; lane_commit: string }): Promise<void> {
    return restoreLane(this.git.root, lane);
  }

  retireLane(
    lane: { path: string; branch: string; lane_commit: string | null },
    keep: string,
  ): Promise<void> {
    return retireLane(this.git.root, lane, keep);
  }
}
