import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from '../../helpers/repo.js';
import { until } from '../../helpers/until.js';
import {
  branches,
  events,
  fileChild,
  lanesInProcess,
  leanRepo,
  readRecord,
  spawnLanes,
  waitForGate,
  worktreePaths,
  writePlan,
} from './support.js';

// Issue 24, item 1: `drop` and `cancel` say the unintegrated work is kept (on the lane
// branch, the worktree in the trash); a later `lanes clean` (no --force) must not throw
// it away: the branch tip stays under refs/lanes-trash/<batch>/<child>.

async function parkedBatch(batch: string) {
  const repo = await leanRepo();
  const failing = { ...fileChild('P'), acceptance: [{ id: 'never', run: ['false'] }] };
  const planPath = writePlan({ batch, executor: 'script', children: [fileChild('A'), failing] });
  const plan = JSON.parse(readFileSync(planPath, 'utf8')) as Record<string, unknown>;
  writeFileSync(planPath, JSON.stringify({ ...plan, budget: { qa_failure_limit: 1 } }));
  const r = await lanesInProcess(['-C', repo, 'start', planPath, '--yes', '--headless']);
  expect(r.exitCode, r.stderr).toBe(3);
  return repo;
}

async function keptFile(repo: string, ref: string, path: string): Promise<string> {
  return git(repo, 'show', `${ref}:${path}`);
}

describe('lanes clean after drop and cancel', () => {
  for (const way of ['drop', 'cancel'] as const) {
    it(`keeps the work ${way} said it kept (refs/lanes-trash/), and says where`, async () => {
      const batch = `k${way}`;
      const repo = await parkedBatch(batch);
      const args = way === 'drop' ? ['drop', batch, 'P'] : ['cancel', batch];
      const w = await lanesInProcess(['-C', repo, ...args]);
      expect(w.exitCode, w.stderr).toBe(0);
      expect(readRecord(repo, batch)!.children.find((c) => c.task_id === 'P')!.state).toBe('dropped');
      expect(await keptFile(repo, `lane/${batch}/P`, 'f/P.txt')).toBe('P');

      const r = await lanesInProcess(['-C', repo, 'clean', batch]);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stdout).toContain(`refs/lanes-trash/${batch}/P`);
      expect(await branches(repo, `lane/${batch}/*`)).toEqual([]);
      expect(await worktreePaths(repo)).toEqual([repo]);
      expect(await keptFile(repo, `refs/lanes-trash/${batch}/P`, 'f/P.txt')).toBe('P');
      const twice = await lanesInProcess(['-C', repo, 'clean', batch]);
      expect(twice.exitCode).toBe(0);
      expect(await keptFile(repo, `refs/lanes-trash/${batch}/P`, 'f/P.txt')).toBe('P');
    }, 120_000);
  }

  it('keeps the work of a child cancelled through a running coordinator (the issue repro)', async (test) => {
    const repo = await leanRepo();
    const gate = join(tempDir('lanes-gate-'), 'never');
    const child = { ...fileChild('a'), scope: ['a.txt'], run: `echo work > a.txt; ${waitForGate(gate)}` };
    const plan = writePlan({ batch: 's6', executor: 'script', children: [child] });
    const start = spawnLanes(test, ['-C', repo, 'start', plan, '--yes', '--headless']);
    await until(() => events(repo, 's6').includes('executor-spawned:a'), 'a to run', { timeoutMs: 60_000 });
    const lane = readRecord(repo, 's6')!.children[0]!.lane!.path;
    await until(() => existsSync(join(lane, 'a.txt')), 'a to write its file', { timeoutMs: 60_000 });
    const cancel = await lanesInProcess(['-C', repo, 'cancel', 's6']);
    expect(cancel.exitCode, cancel.stderr).toBe(0);
    await start;
    expect(await keptFile(repo, 'lane/s6/a', 'a.txt')).toBe('work');
    const r = await lanesInProcess(['-C', repo, 'clean', 's6']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(await keptFile(repo, 'refs/lanes-trash/s6/a', 'a.txt')).toBe('work');
  }, 120_000);
});
