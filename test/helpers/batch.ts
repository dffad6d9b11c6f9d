import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import YAML from 'yaml';
import { parsePlanText } from '../../src/core/plan/plan.js';
import type { Plan } from '../../src/core/plan/plan.js';
import type { TickPorts } from '../../src/core/ports/tick-ports.js';
import type { Report } from '../../src/core/records/report.js';
import { tick } from '../../src/core/tick/tick.js';
import type { TickInput } from '../../src/core/tick/tick.js';
import { batchPorts } from '../../src/cli/batch-run/batch-ports.js';
import { createBatch, preflight } from '../../src/cli/start/confirm.js';
import { findRepo } from '../../src/store/state-dir.js';
import type { RepoPaths } from '../../src/store/state-dir.js';
import { git, tempDir } from './repo.js';

// Drives the core runner by hand, the way the issue asks: the test plays steward (git
// worktree add/remove) and executor (writes files, says the executor exited).

export interface Driver {
  repo: RepoPaths;
  plan: Plan;
  lanesRoot: string;
  ports: () => TickPorts;
  tick: (input?: TickInput) => Promise<Report>;
  /** `git worktree add -b lane/<batch>/<child> <lanesRoot>/<child> <base>`; returns the path. */
  provision: (taskId: string, base: string) => Promise<string>;
  /** Provision every provision handoff of a report and offer them all in one tick. */
  provisionAll: (report: Report) => Promise<Report>;
  release: (taskId: string) => Promise<void>;
  lanePath: (taskId: string) => string;
}

export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

export async function startBatch(
  repoDir: string,
  planYaml: string,
  overrides: { portsPatch?: Partial<TickPorts> } = {},
): Promise<Driver> {
  const plan = parsePlanText(planYaml, 'plan.yaml', YAML);
  const repo = await findRepo(repoDir);
  const checked = await preflight(repo, plan, {});
  await createBatch(repo, plan, checked, new Date(Date.now() - 60_000));
  const lanesRoot = join(tempDir('lanes-lanes-'), 'lanes');
  const ports = () => ({ ...batchPorts(repo, plan.batch), ...overrides.portsPatch }) as TickPorts;
  const lanePath = (taskId: string) => join(lanesRoot, taskId);
  const driver: Driver = {
    repo,
    plan,
    lanesRoot,
    ports,
    lanePath,
    tick: (input = {}) => tick(ports(), input),
    provision: async (taskId, base) => {
      const path = lanePath(taskId);
      await git(repo.root, 'worktree', 'add', '-q', '-b', `lane/${plan.batch}/${taskId}`, path, base);
      return path;
    },
    provisionAll: async (report) => {
      const offers = [];
      for (const h of report.handoffs)
        if (h.action === 'provision')
          offers.push({ task_id: h.task_id, path: await driver.provision(h.task_id, h.base_head) });
      return driver.tick({ offers });
    },
    release: async (taskId) => {
      await git(repo.root, 'worktree', 'remove', lanePath(taskId));
    },
  };
  return driver;
}
