import { randomBytes } from 'node:crypto';
import { loadConfig } from '../store/config-file.js';
import { crashPoint } from '../process/crash-points.js';
import type { TickPorts } from '../core/ports.js';
import { RepoGit } from '../git/repo-git.js';
import { runChecks } from '../qa/check-runner.js';
import { BatchFiles } from '../store/batch-files.js';
import type { RepoPaths } from '../store/state-dir.js';

// Wires the core runner's ports to the real adapters for one batch of one repository.

export function newRunId(): string {
  return `run-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
}

export function batchPorts(
  repo: RepoPaths,
  batchId: string,
): TickPorts & { store: BatchFiles; git: RepoGit } {
  const config = loadConfig(repo.root);
  return {
    store: new BatchFiles(repo.stateDir, batchId),
    git: new RepoGit(repo.root, repo.commonDir),
    qa: { runChecks },
    clock: { now: () => new Date() },
    newRunId,
    integrationChecks: config.integration_checks,
    crashPoint,
  };
}
