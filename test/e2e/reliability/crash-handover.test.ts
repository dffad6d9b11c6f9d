import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'vitest';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from '../../helpers/repo.js';
import { until } from '../../helpers/until.js';
import {
  events,
  integratedTasks,
  lanesProcess,
  leanRepo,
  pool,
  readRecord,
  spawnLanes,
  stateDir,
  waitForGate,
  writePlan,
} from './support.js';

// The crash matrix for `lanes cancel` and `lanes drop` handed to a running coordinator
// (docs/RELIABILITY.md, "Ways out through a running coordinator"). The coordinator runs a
// batch whose child A is at work and whose child B is done; the way out is asked of it
// through a request file, and it is killed (SIGKILL, LANES_CRASH_AT) at every crash point it
// reaches while carrying the request out. The command that asked sees its holder gone and
// finishes the work itself; every cell must end as the run without a crash does: the same
// states, A's work kept on its lane branch and in the trash once, B integrated once.

const CONCURRENCY = Number(process.env.LANES_CRASH_MATRIX_CONCURRENCY ?? 3);

interface Way {
  name: 'cancel' | 'drop';
  batch: string;
  args: (batch: string) => string[];
  /** A's state, and the batch's, once the way out is done. */
  a: string;
  batchState: string;
}

const WAYS: Way[] = [
  { name: 'cancel', batch: 'hc', args: (b) => ['cancel', b], a: 'dropped', batchState: 'cancelled' },
  { name: 'drop', batch: 'hd', args: (b) => ['drop', b, 'A'], a: 'dropped', batchState: 'completed' },
];

interface Running {
  repo: string;
  gate: string;
  coordinator: ReturnType<typeof spawnLanes>;
}

/** A batch run by a live coordinator: B integrated, A at work (its file half written). */
async function running(ctx: TestContext, way: Way, env: Record<string, string>): Promise<Running> {
  const repo = await leanRepo();
  const gate = join(tempDir('lanes-gate-'), 'go');
  const plan = writePlan({
    batch: way.batch,
    executor: 'script',
    max_parallel: 2,
    children: [
      {
        id: 'A',
        goal: 'half done, then waits',
        scope: ['a.txt'],
        acceptance: [{ id: 'a', run: ['test', '-f', 'a.txt'] }],
        run: `echo half done > a.txt; ${waitForGate(gate)}`,
      },
      {
        id: 'B',
        goal: 'quick',
        scope: ['b.txt'],
        acceptance: [{ id: 'b', run: ['test', '-f', 'b.txt'] }],
        run: 'echo b > b.txt',
      },
    ],
  });
  const coordinator = spawnLanes(ctx, ['-C', repo, 'start', plan, '--yes', '--headless'], env);
  await until(
    () => {
      const r = readRecord(repo, way.batch);
      const a = r?.children.find((c) => c.task_id === 'A');
      const b = r?.children.find((c) => c.task_id === 'B');
      return b?.state === 'released' && !!a?.lane && existsSync(join(a.lane.path, 'a.txt'));
    },
    'B released and A at work',
    {
      timeoutMs: 60_000,
      detail: () =>
        `${readRecord(repo, way.batch)
          ?.children.map((c) => `${c.task_id} ${c.state}`)
          .join(', ')}; ${events(repo, way.batch).join(' ')}`,
    },
  );
  return { repo, gate, coordinator };
}

async function problemsOf(repo: string, way: Way): Promise<string[]> {
  const problems: string[] = [];
  const record = readRecord(repo, way.batch);
  if (record?.batch_state !== way.batchState) problems.push(`batch ${record?.batch_state}`);
  const state = (id: string) => record?.children.find((c) => c.task_id === id)?.state;
  if (state('A') !== way.a) problems.push(`A is ${state('A')}`);
  if (state('B') !== 'released') problems.push(`B is ${state('B')}`);
  const kept = await git(repo, 'show', `lane/${way.batch}/A:a.txt`).catch(() => '<missing>');
  if (kept !== 'half done') problems.push(`A's work on its branch: ${kept}`);
  const trash = join(stateDir(repo), 'trash', way.batch);
  const trashed = existsSync(trash) ? readdirSync(trash) : [];
  if (trashed.join() !== 'A') problems.push(`trash holds ${trashed.join(',')}`);
  const tasks = await integratedTasks(repo, `${record!.base_head}..batch/${way.batch}`);
  if (tasks.join() !== 'B') problems.push(`integrated: ${tasks.join(',')}`);
  const requests = join(stateDir(repo), 'batches', way.batch, 'requests');
  if (existsSync(requests) && readdirSync(requests).length) problems.push('a request is left');
  return problems;
}

/** The way out through the coordinator; the points it reached meanwhile (from the count file). */
async function handOver(ctx: TestContext, way: Way, env: Record<string, string>, countFile?: string) {
  const run = await running(ctx, way, env);
  const before = countFile ? readFileSync(countFile, 'utf8').split('\n').filter(Boolean) : [];
  const asked = await lanesProcess(['-C', run.repo, ...way.args(way.batch)]);
  writeFileSync(run.gate, ''); // (A's executor is stopped by the way out; nothing else waits)
  const coordinator = await run.coordinator;
  const after = countFile ? readFileSync(countFile, 'utf8').split('\n').filter(Boolean) : [];
  return { ...run, asked, coordinator, before, reached: after.slice(before.length) };
}

const ATOMIC = 'atomic-write-before-rename';
const ARM = 'way-out-taken';
/** The state files an atomic write names, by kind (a substring only that kind's path has). */
const ATOMIC_KINDS = ['.holder.json', '/tasks/', '.report.json', 'batches/'];

/**
 * Every reach of every point after the coordinator took the request (LANES_CRASH_ARM: the
 * count starts there, so `point:n` names the same step in every run); an atomic write by
 * the kind of file it writes.
 */
function cellsOf(reached: string[]): string[] {
  const taken = reached.findIndex((l) => l.startsWith(`${ARM} `) || l === ARM);
  const counts = new Map<string, number>();
  for (const line of reached.slice(taken + 1)) {
    const [point = '', detail = ''] = line.split(' ');
    const kind = point === ATOMIC ? ATOMIC_KINDS.find((k) => detail.includes(k)) : '';
    if (kind === undefined) continue;
    const key = kind ? `${ATOMIC}@${kind}` : point;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].sort().flatMap(([key, n]) => Array.from({ length: n }, (_, i) => `${key}:${i + 1}`));
}

describe('crash cells for the ways out through a running coordinator', () => {
  it.for(WAYS)(
    '$name: every cell ends as the run without a crash',
    { timeout: 600_000 },
    async (way, ctx) => {
      const countFile = join(tempDir('lanes-count-'), 'reached.txt');
      writeFileSync(countFile, '');
      const reference = await handOver(ctx, way, { LANES_CRASH_COUNT_FILE: countFile }, countFile);
      expect(reference.asked.exitCode, reference.asked.stderr).toBe(0);
      expect(await problemsOf(reference.repo, way)).toEqual([]);
      const cells = cellsOf(reference.reached);

      expect(cells.length).toBeGreaterThan(3);
      const results = await pool(cells, CONCURRENCY, async (spec) => {
        const r = await handOver(ctx, way, { LANES_CRASH_AT: spec, LANES_CRASH_ARM: ARM });
        const problems = await problemsOf(r.repo, way);
        if (r.coordinator.signal !== 'SIGKILL') problems.push('the coordinator was not killed there');
        if (r.asked.exitCode !== 0) problems.push(`${way.name} exit ${r.asked.exitCode}: ${r.asked.stderr}`);
        if (events(r.repo, way.batch).filter((e) => e === 'integrated:B').length !== 1)
          problems.push('B integrated more than once');
        return { spec, problems };
      });
      expect(results.filter((r) => r.problems.length > 0)).toEqual([]);
    },
  );
});
