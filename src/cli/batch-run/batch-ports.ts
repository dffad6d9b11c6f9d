import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { loadConfig } from '../../store/config-file.js';
import { crashPoint } from '../../process/crash-points.js';
import { systemClock } from '../../process/system-clock.js';
import type { TickPorts } from '../../core/ports/tick-ports.js';
import { FinalRunner } from '../../coordinator/whole-batch/final-runner.js';
import { RepoGit } from '../../git/ports/repo-git.js';
import { runChecks } from '../../qa/check-runner.js';
import { prepareCheckout } from '../../qa/lane-setup.js';
import { BatchFiles } from '../../store/batch-files.js';
import { batchPaths } from '../../store/state-dir.js';
import type { RepoPaths } from '../../store/state-dir.js';

// Wires the core runner's ports to the real adapters for one batch of one repository.

export function newRunId(): string {
  return `run-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
}

export function batchPorts(
  repo: RepoPaths,
  batchId: string,
): TickPorts & { store: BatchFiles; git: RepoGit } {
  const config = loadConfig(repo.root);
  const store = new BatchFiles(repo.stateDir, batchId);
  const repoGit = new RepoGit(repo.root, repo.commonDir);
  const finalLogs = join(batchPaths(repo.stateDir, batchId).logsDir, 'final');
  return {
    store,
    git: repoGit,
    qa: {
      runChecks,
      prepare: (dir, logPathFor) => prepareCheckout(repo.root, dir, config, logPathFor),
    },
    clock: systemClock,
    newRunId,
    integrationChecks: config.integration_checks,
    finalChecks: config.final_checks,
    final: new FinalRunner(repoGit, config, store.scratchDir(), finalLogs),
    crashPoint,
  };
}
