import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/repo.js';
import { lanesProcess, leanRepo, pool, readJournal } from './support.js';
import { expectExit, SCENARIOS } from './ways-out-scenarios.js';
import type { Scenario } from './ways-out-scenarios.js';

// The crash matrix for the ways out of a stopped batch (docs/RELIABILITY.md, "Crash cells
// for drop, cancel and the rework onto a new head"). Each scenario brings a batch to a stop
// through the CLI, then runs the command under test — `resume --approve` (the rework of a
// conflicting lane), `drop`, `cancel` (of a batch whose coordinator was killed while its
// executor slept) — killed (SIGKILL, LANES_CRASH_AT) at every crash point it reaches, and
// repeats the same command until it ends as it does without a crash. Every cell must then
// end exactly as the reference: the same record states, the work on the same branches, no
// step done twice (one rework merge, one trash folder, one integration per child).
//
// LANES_CRASH_WAYS_OUT_ONLY=<regexp> picks cells by "<scenario> <spec>".

const CONCURRENCY = Number(process.env.LANES_CRASH_MATRIX_CONCURRENCY ?? 3);
const ATOMIC = 'atomic-write-before-rename';
/** The files an atomic write names, by kind (a substring of the path that only that kind has). */
const atomicKinds = (batch: string): Record<string, string> => ({
  'lock intent': '.intent.',
  'lock holder': '.holder.json',
  record: `batches/${batch}.json`,
  kernel: '/tasks/',
  report: `${batch}.report.json`,
});

// ---- cells ---------------------------------------------------------------------------------

interface Cell {
  scenario: Scenario;
  spec: string;
}

function freshRepo(files: Record<string, string>): Promise<string> {
  return leanRepo(files);
}

async function countPoints(s: Scenario): Promise<Map<string, number>> {
  const repo = await freshRepo({ 'f.txt': 'base\n' });
  await s.setup(repo);
  const file = join(tempDir('lanes-count-'), 'reached.txt');
  writeFileSync(file, '');
  const r = await lanesProcess(['-C', repo, ...s.command(repo)], { LANES_CRASH_COUNT_FILE: file });
  expectExit(`${s.name} reference`, r, s.exit);
  const problems = await s.check(repo);
  if (problems.length) throw new Error(`${s.name} reference: ${problems.join('; ')}`);
  const counts = new Map<string, number>();
  for (const line of readFileSync(file, 'utf8').split('\n').filter(Boolean)) {
    const [point = '', detail = ''] = line.split(' ');
    const key =
      point === ATOMIC
        ? `${ATOMIC}@${Object.values(atomicKinds(s.batch)).find((f) => detail.includes(f)) ?? '?'}`
        : point;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

function cellsOf(s: Scenario, counts: Map<string, number>): Cell[] {
  // Every reach of every point is an exact cell (a fresh run killed at the n-th reach, then
  // clean runs): the points are reached a few times each. The atomic write: its first reach.
  const cells: Cell[] = [];
  for (const [point, n] of [...counts].sort()) {
    if (point.endsWith('@?')) continue;
    const reaches = point.startsWith(ATOMIC) ? [...new Set([1, Math.ceil(n / 2)])] : range(n);
    for (const i of reaches) cells.push({ scenario: s, spec: `${point}:${i}` });
  }
  return cells;
}

interface CellResult {
  name: string;
  crashes: number;
  runs: string[];
  problems: string[];
}

async function runCell(cell: Cell): Promise<CellResult> {
  const s = cell.scenario;
  const name = `${s.name} ${cell.spec}`;
  const repo = await freshRepo({ 'f.txt': 'base\n' });
  try {
    await s.setup(repo);
  } catch (error) {
    return { name, crashes: 0, runs: [], problems: [`setup: ${(error as Error).message}`] };
  }
  const args = ['-C', repo, ...s.command(repo)];
  const runs: string[] = [];
  let crashes = 0;
  let crashedLast = true;
  let done = false;
  for (let i = 0; i < 4 && !done; i++) {
    const env: Record<string, string> = i === 0 ? { LANES_CRASH_AT: cell.spec } : {};
    const r = await lanesProcess(args, env);
    crashedLast = r.signal === 'SIGKILL';
    if (crashedLast) crashes++;
    runs.push(crashedLast ? 'killed' : String(r.exitCode));
    done = !crashedLast && r.exitCode === s.exit;
    if (!crashedLast && !done) break;
  }
  const problems: string[] = [];
  if (crashes === 0) problems.push('never crashed: point not reached');
  if (!done) problems.push(`did not finish: ${runs.join(' ')}`);
  if (readJournal(repo, s.batch).unreadable) problems.push('unreadable journal lines');
  problems.push(...(await s.check(repo)));
  return { name, crashes, runs, problems };
}

describe('crash cells for the ways out: rework onto a new head, drop, cancel', () => {
  it('every cell ends as the reference run does', async () => {
    const only = process.env.LANES_CRASH_WAYS_OUT_ONLY;
    const cells: Cell[] = [];
    for (const s of SCENARIOS) {
      const counts = await countPoints(s);
      cells.push(...cellsOf(s, counts).filter((c) => !only || new RegExp(only).test(`${s.name} ${c.spec}`)));
    }
    // The new points are reached where they should be.
    const names = cells.map((c) => `${c.scenario.name} ${c.spec}`);
    if (!only) {
      expect(names).toContain('rework after-lane-rework:1');
      expect(names).toContain('drop after-lane-kept:1');
      expect(names).toContain('drop tick-persist:drop:1');
      expect(names).toContain('cancel after-lane-kept:1');
      expect(names).toContain('cancel tick-persist:cancel:1');
    }
    const results = await pool(cells, CONCURRENCY, runCell);
    if (process.env.LANES_CRASH_MATRIX_OUT)
      writeFileSync(
        process.env.LANES_CRASH_MATRIX_OUT,
        `${results.map((r) => `${r.problems.length ? 'FAIL' : 'ok  '} ${r.name.padEnd(48)} ${r.crashes} crash(es); runs ${r.runs.join(' ')}${r.problems.length ? `  PROBLEMS: ${r.problems.join('; ')}` : ''}`).join('\n')}\n`,
      );
    expect(
      results.filter((r) => r.problems.length).map((r) => `${r.name}: ${r.problems.join('; ')}`),
    ).toEqual([]);
  }, 900_000);
});
