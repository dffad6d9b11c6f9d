import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { git, tempDir } from '../../helpers/repo.js';
import { LAND_BATCH, landCell, landCrashSpecs, landTemplate } from './land-crash.js';
import {
  branches,
  copyRepo,
  integratedTasks,
  leanRepo,
  lanesProcess,
  pool,
  readJournal,
  readRecord,
  sixChildPlan,
  stateDir,
  worktreePaths,
  writePlan,
} from './support.js';

// The crash matrix (docs/RELIABILITY.md): a 6-child, 3-wave batch run by the real CLI.
// An instrumented reference run (LANES_CRASH_COUNT_FILE) counts how often each crash point
// is reached; then, for each cell, `lanes start --yes --headless` is killed (SIGKILL, from
// inside, via LANES_CRASH_AT) at the n-th reach of a point, and `lanes resume --headless`
// (or `lanes start` again when the crash came before the first record) is repeated until
// the batch ends. Every cell must end exactly as the reference: completed, the same tree on
// the batch branch, one integration commit per child, no worktree left, a readable journal.
//
// Which cells: see cellsFor.
//
// LANES_CRASH_MATRIX_CONCURRENCY (default 4) cells run at once, each in its own repository.
// LANES_CRASH_MATRIX_OUT=<file> writes the per-cell table (docs/RELIABILITY.md's figures).
// LANES_CRASH_MATRIX_ONLY=<regexp> runs only the cells whose LANES_CRASH_AT matches.

const BATCH = 'm';
const CHILDREN = ['c1', 'c2', 'c3', 'c4', 'c5', 'c6'];
const CONCURRENCY = Number(process.env.LANES_CRASH_MATRIX_CONCURRENCY ?? 4);
const ATOMIC = 'atomic-write-before-rename';
const ATOMIC_KINDS: Record<string, string> = {
  'lock intent': '.intent.',
  'lock holder': 'holder.json',
  plan: 'plan.json',
  record: `batches/${BATCH}.json`,
  kernel: '/tasks/',
  report: 'report.json',
};
/** Processes a cell may start after its crash before it counts as not converging. */
const MAX_RECOVERIES = 4;
/**
 * A chain kills each process at its first reach of the point, so it needs as many processes
 * as the point is reached in all. That is more than in the reference run when a process is
 * killed with work of the point's undone that a later process does again at a new head: a
 * lane admitted, given its kernel and killed at `after-kernel-enroll`, is given a new kernel
 * when another child's integration has moved the head before it is admitted again. Each
 * integration can do that to each of the lanes waiting for a slot (max_parallel 2): at most
 * twice more reaches than the reference's. (Seen under load in CI: 11 processes for that
 * point's 6 reaches; one more resume completed the batch.)
 */
const chainBound = (reaches: number) => 3 * reaches + MAX_RECOVERIES;

interface Cell {
  point: string;
  /** `exact`: the start crashes at the n-th reach, then clean resumes. `chain`: the start
   * and every process after one that crashed crash at their first reach of the point, so
   * the batch is killed at every reach of it in turn. */
  mode: 'exact' | 'chain';
  n: number;
  /** LANES_CRASH_AT */
  spec: string;
}

interface Final {
  batch_state: string | undefined;
  report_state: string | undefined;
  tree: string;
  tasks: string[];
  commits_recorded: number;
  worktrees: string[];
  lane_branches: string[];
  journal_unreadable: number;
}

interface CellResult {
  cell: Cell;
  crashed: boolean;
  /** What each crash hit, as the crashing process said it ("... (batches/m.json)"). */
  hits: string[];
  recoveries: string[];
  ms: number;
  final: Final;
  problems: string[];
}

let template: string;
let planFile: string;
let reference: { counts: Map<string, number>; atomicKinds: Map<string, number>; final: Final; ms: number };

beforeAll(async () => {
  template = await leanRepo();
  planFile = writePlan(sixChildPlan(BATCH));
});

async function finalState(repo: string): Promise<Final> {
  const record = readRecord(repo, BATCH);
  const reportFile = join(stateDir(repo), 'batches', `${BATCH}.report.json`);
  const report = existsSync(reportFile)
    ? (JSON.parse(readFileSync(reportFile, 'utf8')) as { batch_state: string })
    : null;
  const base = record?.base_head ?? 'HEAD';
  return {
    batch_state: record?.batch_state,
    report_state: report?.batch_state,
    tree: (await git(repo, 'rev-parse', `batch/${BATCH}^{tree}`)).trim(),
    tasks: await integratedTasks(repo, `${base}..batch/${BATCH}`),
    commits_recorded: record?.commits.length ?? 0,
    worktrees: await worktreePaths(repo),
    lane_branches: await branches(repo, 'lane/*'),
    journal_unreadable: readJournal(repo, BATCH).unreadable,
  };
}

function compare(repo: string, final: Final): string[] {
  const problems: string[] = [];
  const want = reference.final;
  if (final.batch_state !== 'completed') problems.push(`batch_state ${final.batch_state}`);
  if (final.report_state !== final.batch_state)
    problems.push(`report says ${final.report_state}, record ${final.batch_state}`);
  if (final.tree !== want.tree) problems.push(`tree ${final.tree} != ${want.tree}`);
  if ([...final.tasks].sort().join() !== CHILDREN.join())
    problems.push(`integration commits for ${final.tasks.join(',')}`);
  if (final.commits_recorded !== CHILDREN.length) problems.push(`${final.commits_recorded} commits recorded`);
  if (final.worktrees.join() !== repo) problems.push(`worktrees left: ${final.worktrees.join(', ')}`);
  if (final.lane_branches.length) problems.push(`lane branches left: ${final.lane_branches.join(', ')}`);
  if (final.journal_unreadable) problems.push(`${final.journal_unreadable} unreadable journal lines`);
  return problems;
}

const startArgs = (repo: string) => ['-C', repo, 'start', planFile, '--yes', '--headless'];

const CRASH_LINE = /crash point (\S+) reached(.*?) \(LANES_CRASH_AT\)/;

async function runCell(cell: Cell): Promise<CellResult> {
  const repo = copyRepo(template);
  const started = Date.now();
  const first = await lanesProcess(startArgs(repo), { LANES_CRASH_AT: cell.spec });
  const crashed = first.signal === 'SIGKILL';
  const hits: string[] = [];
  const noteHit = (stderr: string) => {
    const hit = CRASH_LINE.exec(stderr);
    if (hit) hits.push(`${hit[1]}${hit[2]}`);
  };
  noteHit(first.stderr);
  const recoveries: string[] = [];
  let done = !crashed && first.exitCode === 0;
  let last = first;
  const bound = cell.mode === 'chain' ? chainBound(cell.n) : MAX_RECOVERIES;
  while (!done && recoveries.length < bound) {
    // Before its first record, a batch is started again (src/cli/confirm.ts: "a crash in between can be started again").
    const args = readRecord(repo, BATCH) ? ['-C', repo, 'resume', BATCH, '--headless'] : startArgs(repo);
    const chained = cell.mode === 'chain' && last.signal === 'SIGKILL';
    last = await lanesProcess(args, chained ? { LANES_CRASH_AT: cell.spec } : {});
    noteHit(last.stderr);
    recoveries.push(`${args[2]}${chained ? '*' : ''}→${last.signal ?? last.exitCode}`);
    done = last.exitCode === 0;
    if (last.exitCode === 1 || last.exitCode === 2 || last.exitCode === 4) break; // not a "go on"
  }
  const final = await finalState(repo);
  const problems = compare(repo, final);
  if (!crashed) problems.unshift(`the start did not crash (exit ${first.exitCode}): point not reached`);
  if (!done)
    problems.push(`not finished after ${recoveries.join(' ')}: ${last.stderr.trim().split('\n').at(-1)}`);
  return { cell, crashed, hits, recoveries, ms: Date.now() - started, final, problems };
}

/**
 * The cells `npm test` runs (docs/RELIABILITY.md, "What the matrix covers"):
 * - every named point but the atomic write: one chain, which kills the start at the
 *   point's first reach and every later process at its own first reach, until a process
 *   runs to the end without reaching it — so the batch is killed at every reach of the
 *   point in turn (a point reached once is a single exact cell);
 * - the atomic write (temp file written, not renamed yet), reached ~75 times a run:
 *   exact cells grouped by the file written (lock intent, lock holder, plan, record, lane
 *   kernel, report), at the first and the middle write of each kind.
 * LANES_CRASH_MATRIX=full instead makes every (point, n) an exact cell — a fresh start
 * killed at the n-th reach, then clean resumes — and adds the next-to-last atomic write of
 * each kind (~90 cells: too slow for every `npm test`, run by hand; figures in the doc).
 */
function cellsFor(counts: Map<string, number>, atomicKinds: Map<string, number>): Cell[] {
  const full = process.env.LANES_CRASH_MATRIX === 'full';
  const cells: Cell[] = [];
  for (const [point, count] of [...counts].sort()) {
    if (point === ATOMIC) continue;
    if (full || count === 1)
      for (let n = 1; n <= count; n++) cells.push({ point, mode: 'exact', n, spec: `${point}:${n}` });
    else cells.push({ point, mode: 'chain', n: count, spec: point });
  }
  for (const [kind, filter] of Object.entries(ATOMIC_KINDS)) {
    const count = atomicKinds.get(kind) ?? 0;
    const picks = [1, Math.ceil(count / 2), ...(full ? [count - 1] : [])];
    for (const n of [...new Set(picks.filter((n) => n >= 1 && n <= count))].sort((a, b) => a - b))
      cells.push({ point: `${ATOMIC}@${kind}`, mode: 'exact', n, spec: `${ATOMIC}@${filter}:${n}` });
  }
  return cells;
}

describe('crash matrix: a 6-child, 3-wave batch killed at every crash point', () => {
  it('the instrumented reference run completes and counts every point', async () => {
    const repo = copyRepo(template);
    const countFile = join(tempDir('lanes-count-'), 'reached.txt');
    writeFileSync(countFile, '');
    const r = await lanesProcess(startArgs(repo), { LANES_CRASH_COUNT_FILE: countFile });
    expect(r.exitCode, r.stderr).toBe(0);
    const counts = new Map<string, number>();
    const atomicKinds = new Map<string, number>();
    for (const line of readFileSync(countFile, 'utf8').split('\n').filter(Boolean)) {
      const [point = '', detail = ''] = line.split(' ');
      counts.set(point, (counts.get(point) ?? 0) + 1);
      if (point !== ATOMIC) continue;
      const kind = Object.entries(ATOMIC_KINDS).find(([, filter]) => detail.includes(filter))?.[0] ?? '?';
      atomicKinds.set(kind, (atomicKinds.get(kind) ?? 0) + 1);
    }
    reference = { counts, atomicKinds, final: await finalState(repo), ms: r.ms };
    expect(compare(repo, reference.final)).toEqual([]);
    for (const point of [
      'after-kernel-enroll',
      'after-lane-commit',
      'after-update-ref',
      'after-worktree-add',
      'after-worktree-remove',
      'after-executor-exit',
    ])
      expect(counts.get(point), point).toBe(CHILDREN.length);
    for (const step of ['start', 'observe', 'commit', 'integrate', 'admit', 'release', 'report'])
      expect(counts.get(`tick-persist:${step}`), step).toBeGreaterThanOrEqual(1);
    expect(atomicKinds.get('?')).toBeUndefined();
    for (const kind of Object.keys(ATOMIC_KINDS))
      expect(atomicKinds.get(kind), kind).toBeGreaterThanOrEqual(1);
  }, 120_000);

  it('every cell converges to the reference outcome', async () => {
    expect(reference, 'the reference run').toBeDefined();
    const only = process.env.LANES_CRASH_MATRIX_ONLY; // a regular expression over the cell specs
    const cells = cellsFor(reference.counts, reference.atomicKinds).filter(
      (c) => !only || new RegExp(only).test(c.spec),
    );
    const started = Date.now();
    const results = await pool(cells, CONCURRENCY, runCell);
    const wall = Date.now() - started;

    const lines = [
      `reference: ${reference.ms} ms; counts ${JSON.stringify(Object.fromEntries(reference.counts))}; atomic writes by kind ${JSON.stringify(Object.fromEntries(reference.atomicKinds))}`,
      `${results.length} cells, concurrency ${CONCURRENCY}, ${wall} ms wall`,
      ...results.map(
        (r) =>
          `${r.problems.length ? 'FAIL' : 'ok  '} ${r.cell.mode} ${r.cell.spec.padEnd(46)} ${r.hits.length} crash(es): ${r.hits.join(' | ')}; then ${r.recoveries.join(' ')}; ${r.ms} ms${r.problems.length ? `  PROBLEMS: ${r.problems.join('; ')}` : ''}`,
      ),
    ];
    if (process.env.LANES_CRASH_MATRIX_OUT)
      writeFileSync(process.env.LANES_CRASH_MATRIX_OUT, `${lines.join('\n')}\n`);
    const failed = results.filter((r) => r.problems.length > 0);
    expect(failed.map((r) => `${r.cell.spec}: ${r.problems.join('; ')}`)).toEqual([]);
    expect(results.every((r) => r.crashed)).toBe(true);
  }, 1_200_000);
});

// `lanes land --merge` onto the checked-out base (issue 24, item 4): killed at every point
// a reference landing reaches (the landing intent's atomic write, the branch moved before
// the worktree followed, the journal), then `land --merge` again until it exits 0; each cell
// must end landed whole: main the merge, the worktree following it, a third land "already".
describe('crash matrix: lanes land --merge', () => {
  it('every point of a landing converges to the landed batch', async () => {
    const template = await landTemplate();
    const specs = await landCrashSpecs(template);
    expect(specs).toContain('after-land-update-ref@main:1');
    expect(specs.some((s) => s.startsWith(`${ATOMIC}@batches/${LAND_BATCH}/landing.json`))).toBe(true);
    const results = await pool(specs, CONCURRENCY, (spec) => landCell(template, spec));
    if (process.env.LANES_CRASH_MATRIX_OUT)
      writeFileSync(
        `${process.env.LANES_CRASH_MATRIX_OUT}.land`,
        `${results.map((r) => `${r.problems.length ? 'FAIL' : 'ok  '} ${r.spec} ${r.signal} then ${r.runs.join(' ')} ${r.problems.join('; ')}`).join('\n')}\n`,
      );
    expect(results.map((r) => [r.spec, r.signal])).toEqual(specs.map((s) => [s, 'SIGKILL']));
    expect(results.filter((r) => r.problems.length > 0)).toEqual([]);
  }, 300_000);
});
