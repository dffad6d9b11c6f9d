import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import type { ResultPromise } from 'execa';
import { describe, expect, it } from 'vitest';
import type { TestContext } from 'vitest';
import type { KernelRecord } from '../src/core/kernel.js';
import type { BatchRecord } from '../src/core/record.js';
import type { Report } from '../src/core/report.js';
import { isSameProcessAlive } from '../src/hosts/process-info.js';
import { CLI, git, makeRepo, runCli, snapshotTree, tempDir } from './helpers/repo.js';
import { until } from './helpers/until.js';

// No dead ends (docs/DECISIONS.md): every stop of a batch has a way on, driven here through
// the built CLI as a user would — real git in temporary repositories, script executors, a
// real coordinator process. Nothing sleeps to synchronise. Run `npm run -s build` first.

interface ChildSpec {
  id: string;
  goal: string;
  blocked_by?: string[];
  scope: string[];
  acceptance: { id: string; run: string }[];
  run: string;
}

function writePlan(batch: string, children: ChildSpec[], extra: Record<string, unknown> = {}): string {
  const path = join(tempDir('lanes-plan-'), `${batch}.plan.json`);
  const plan = { batch, executor: 'script', max_parallel: 2, ...extra, children };
  writeFileSync(path, `${JSON.stringify(plan, null, 2)}\n`);
  return path;
}

const stateDir = (repo: string) => join(repo, '.git', 'lanes');

function readRecord(repo: string, batch: string): BatchRecord | null {
  const file = join(stateDir(repo), 'batches', `${batch}.json`);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as BatchRecord) : null;
}

function readReport(repo: string, batch: string): Report {
  return JSON.parse(readFileSync(join(stateDir(repo), 'batches', `${batch}.report.json`), 'utf8')) as Report;
}

function kernelOf(repo: string, batch: string, task: string): KernelRecord {
  return JSON.parse(
    readFileSync(join(stateDir(repo), 'batches', batch, 'tasks', `${task}.json`), 'utf8'),
  ) as KernelRecord;
}

function journal(repo: string, batch: string): { event: string; task?: string; [k: string]: unknown }[] {
  const file = join(stateDir(repo), 'batches', `${batch}.events.jsonl`);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { event: string });
}

const child = (r: BatchRecord | null, id: string) => r!.children.find((c) => c.task_id === id)!;

/** `Lanes-Task` of every commit on the batch branch since its base: one per integration. */
async function integratedTasks(repo: string, batch: string): Promise<string[]> {
  const base = readRecord(repo, batch)!.base_head;
  const out = await git(
    repo,
    'log',
    '--format=%(trailers:key=Lanes-Task,valueonly)',
    `${base}..batch/${batch}`,
  );
  return out
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .sort();
}

async function fileAt(repo: string, ref: string, path: string): Promise<string> {
  return git(repo, 'show', `${ref}:${path}`);
}

/** A commit on `branch` made with plumbing only, as a user editing the batch branch by hand would. */
async function handCommit(repo: string, branch: string, path: string, text: string): Promise<string> {
  const index = join(tempDir('lanes-index-'), 'index');
  const env = { GIT_INDEX_FILE: index, GIT_CONFIG_NOSYSTEM: '1' };
  const run = async (args: string[], input?: string) =>
    String(
      (await execa('git', args, { cwd: repo, env, ...(input !== undefined ? { input } : {}) })).stdout,
    ).trim();
  const parent = await run(['rev-parse', `refs/heads/${branch}`]);
  await run(['read-tree', parent]);
  const blob = await run(['hash-object', '-w', '--stdin'], text);
  await run(['update-index', '--add', '--cacheinfo', `100644,${blob},${path}`]);
  const tree = await run(['write-tree']);
  const commit = await run(['commit-tree', tree, '-p', parent, '-m', 'by hand']);
  await run(['update-ref', `refs/heads/${branch}`, commit, parent]);
  return commit;
}

function spawnCli(test: TestContext, args: string[]): ResultPromise {
  const p = execa(process.execPath, [CLI, ...args], {
    env: { NO_COLOR: '1' },
    reject: false,
    stdin: 'ignore',
  });
  test.onTestFinished(() => {
    if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  });
  return p;
}

/** A shell fragment that waits (bounded, 60 s) until the test creates `gate`. */
const waitFor = (gate: string) => `for i in $(seq 1 1200); do [ -f '${gate}' ] && break; sleep 0.05; done; `;

const lanes = (repo: string, ...args: string[]) => runCli(['-C', repo, ...args]);

describe('a conflict park clears: rework onto the new head', () => {
  it('resume merges the batch head into the lane; the user resolves the conflict there; the batch completes', async (ctx) => {
    const repo = await makeRepo({ 'f.txt': 'base\n' });
    const gate = join(tempDir('lanes-gate-'), 'go');
    const plan = writePlan('cf', [
      {
        id: 'A',
        goal: 'write A into f.txt',
        scope: ['f.txt'],
        acceptance: [{ id: 'has-A', run: 'grep -qx A f.txt' }],
        run: `${waitFor(gate)}printf 'A\\n' > f.txt`,
      },
    ]);
    const start = spawnCli(ctx, ['-C', repo, 'start', plan, '--yes', '--headless']);
    await until(() => journal(repo, 'cf').some((e) => e.event === 'executor-spawned'), 'A to run', {
      timeoutMs: 60_000,
    });
    // Meanwhile the user changes the same line on the batch branch by hand.
    const hand = await handCommit(repo, 'batch/cf', 'f.txt', 'hand\n');
    writeFileSync(gate, '');
    const first = await start;
    expect(first.exitCode, String(first.stderr)).toBe(3);
    const lanePath = child(readRecord(repo, 'cf'), 'A').lane!.path;
    const oldLaneCommit = child(readRecord(repo, 'cf'), 'A').lane!.lane_commit!;
    expect(child(readRecord(repo, 'cf'), 'A').reason).toBe('batch_integration_conflict: f.txt');
    expect(readReport(repo, 'cf').next_action).toContain('lanes drop cf A');

    // Round 1: resume brings the lane onto the head; the conflict is left in the lane's file.
    const round1 = await lanes(repo, 'resume', 'cf', '--approve', '--headless');
    expect(round1.exitCode, round1.stderr).toBe(3);
    const parked = child(readRecord(repo, 'cf'), 'A');
    expect(parked.state).toBe('needs_human');
    expect(parked.reason).toBe('lane_conflict: f.txt');
    expect(parked.lane).toMatchObject({ base_head: hand, lane_commit: null, path: lanePath });
    expect(readFileSync(join(lanePath, 'f.txt'), 'utf8')).toMatch(
      /^<<<<<<< [\s\S]*hand[\s\S]*=======[\s\S]*A[\s\S]*>>>>>>> /m,
    );
    // Nothing lost: the old lane commit is an ancestor of the lane branch; the user's worktree untouched.
    await git(repo, 'merge-base', '--is-ancestor', oldLaneCommit, 'lane/cf/A');
    expect(await git(repo, 'status', '--porcelain')).toBe('');
    expect(readFileSync(join(repo, 'f.txt'), 'utf8')).toBe('base\n');
    expect(readReport(repo, 'cf').next_action).toContain('resolve the conflict markers');

    // Resuming with the markers still there changes nothing (no second rework).
    const again = await lanes(repo, 'resume', 'cf', '--approve', '--headless');
    expect(again.exitCode, again.stderr).toBe(3);
    expect(journal(repo, 'cf').filter((e) => e.event === 'lane-reworked')).toHaveLength(1);
    expect(journal(repo, 'cf').some((e) => e.event === 'lane-conflict-unresolved')).toBe(true);

    // Round 2: the user resolves the conflict in the lane and resumes: QA, delivery on the new base, integration.
    writeFileSync(join(lanePath, 'f.txt'), 'hand\nA\n');
    const round2 = await lanes(repo, 'resume', 'cf', '--approve', '--headless');
    expect(round2.exitCode, round2.stderr).toBe(0);
    const done = readRecord(repo, 'cf')!;
    expect(done.batch_state).toBe('completed');
    expect(await fileAt(repo, 'batch/cf', 'f.txt')).toBe('hand\nA');
    expect(await integratedTasks(repo, 'cf')).toEqual(['A']);
    // The delivery commit has the new lane base (the hand commit) as its only parent.
    const delivery = child(done, 'A').lane!.lane_commit!;
    expect((await git(repo, 'rev-list', '--parents', '-n', '1', delivery)).split(' ').slice(1)).toEqual([
      hand,
    ]);
    expect(journal(repo, 'cf').filter((e) => e.event === 'integrated')).toHaveLength(1);
  }, 180_000);

  it('failed integration checks: resume reworks the lane onto the head (clean), QA again, integrates', async (ctx) => {
    const repo = await makeRepo({ 'x.txt': 'one\ntwo\nthree\n' });
    const gate = join(tempDir('lanes-gate-'), 'go');
    // A's check wants x.txt to be exactly 3 lines; a hand commit appends a 4th line: the
    // clean merge fails it. The user then fixes the lane: A drops the last line too.
    const plan = writePlan('ck', [
      {
        id: 'A',
        goal: 'first line upper case',
        scope: ['x.txt'],
        acceptance: [{ id: 'three-lines', run: 'test $(wc -l < x.txt) -eq 3 && grep -qx ONE x.txt' }],
        run: `${waitFor(gate)}printf 'ONE\\ntwo\\nthree\\n' > x.txt`,
      },
    ]);
    const start = spawnCli(ctx, ['-C', repo, 'start', plan, '--yes', '--headless']);
    await until(() => journal(repo, 'ck').some((e) => e.event === 'executor-spawned'), 'A to run', {
      timeoutMs: 60_000,
    });
    const hand = await handCommit(repo, 'batch/ck', 'x.txt', 'one\ntwo\nthree\nfour\n');
    writeFileSync(gate, '');
    expect((await start).exitCode).toBe(3);
    const parked = child(readRecord(repo, 'ck'), 'A');
    expect(parked.reason).toMatch(
      /^batch_integration_check_failed: A:three-lines \(output: .*integration-.*\)$/,
    );
    // The resume merges the head into the lane: x.txt now has four lines there; QA fails,
    // the executor gets its rework (the script writes three lines again), QA passes.
    const resumed = await lanes(repo, 'resume', 'ck', '--approve', '--headless');
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    const done = readRecord(repo, 'ck')!;
    expect(done.batch_state).toBe('completed');
    expect(child(done, 'A').lane!.base_head).toBe(hand);
    expect(await fileAt(repo, 'batch/ck', 'x.txt')).toBe('ONE\ntwo\nthree');
    expect(await integratedTasks(repo, 'ck')).toEqual(['A']);
    const events = journal(repo, 'ck').map((e) => e.event);
    expect(events.filter((e) => e === 'lane-reworked')).toHaveLength(1);
  }, 180_000);
});

describe('lanes drop', () => {
  it('a parked child holds its scope; drop frees it; resume --approve completes, listing the dropped', async () => {
    const repo = await makeRepo();
    const plan = writePlan(
      'dr',
      [
        {
          id: 'A',
          goal: 'never passes',
          scope: ['shared.txt'],
          acceptance: [{ id: 'never', run: 'false' }],
          run: "printf 'work of A\\n' > shared.txt",
        },
        {
          id: 'B',
          goal: 'same file as A',
          scope: ['shared.txt'],
          acceptance: [{ id: 'has-B', run: 'grep -qx B shared.txt' }],
          run: "printf 'B\\n' > shared.txt",
        },
        {
          id: 'C',
          goal: 'after A',
          blocked_by: ['A'],
          scope: ['c.txt'],
          acceptance: [{ id: 'c', run: 'test -f c.txt' }],
          run: 'echo c > c.txt',
        },
      ],
      { max_parallel: 2, budget: { max_children: 3, qa_failure_limit: 1 } },
    );
    const first = await lanes(repo, 'start', plan, '--yes', '--headless');
    expect(first.exitCode, first.stderr).toBe(3);
    let record = readRecord(repo, 'dr')!;
    expect(child(record, 'A')).toMatchObject({ state: 'needs_human', reason: 'QA failure limit reached' });
    expect(child(record, 'B').state).toBe('pending'); // A holds shared.txt while parked
    expect(child(record, 'C').state).toBe('skipped_blocked');
    const lanePath = child(record, 'A').lane!.path;

    // `wait` on a parked batch returns at once with 3.
    const waited = await lanes(repo, 'wait', 'dr', '--until', 'completed', '--timeout', '60');
    expect(waited.exitCode).toBe(3);
    expect(waited.stdout.trim()).toBe('needs_human');

    const bad = await lanes(repo, 'drop', 'dr', 'nobody');
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('no child "nobody"');

    const dropped = await lanes(repo, 'drop', 'dr', 'A', '--reason', 'not worth it');
    expect(dropped.exitCode, dropped.stderr).toBe(0);
    record = readRecord(repo, 'dr')!;
    expect(child(record, 'A')).toMatchObject({ state: 'dropped', reason: 'not worth it' });
    expect(child(record, 'C')).toMatchObject({ state: 'dropped', reason: 'dropped with A' });
    // Its work is on its lane branch; its worktree went to the trash under the state dir.
    expect(existsSync(lanePath)).toBe(false);
    expect(await fileAt(repo, 'lane/dr/A', 'shared.txt')).toBe('work of A');
    const trashed = join(stateDir(repo), 'trash', 'dr', 'A');
    expect(readFileSync(join(trashed, 'shared.txt'), 'utf8')).toBe('work of A\n');
    expect(dropped.stdout).toContain(`worktree moved to ${trashed}`);

    const resumed = await lanes(repo, 'resume', 'dr', '--approve', '--headless');
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    record = readRecord(repo, 'dr')!;
    expect(record.batch_state).toBe('completed');
    expect(child(record, 'B').state).toBe('released');
    expect(await integratedTasks(repo, 'dr')).toEqual(['B']);
    expect(readReport(repo, 'dr').next_action).toMatch(
      /1 of 3 children are integrated .*dropped: A \(not worth it; work on lane\/dr\/A\), C \(dropped with A\)/,
    );
  }, 180_000);
});

describe('lanes drop through a running coordinator', () => {
  it("stops the dropped child's executor; the coordinator goes on and the batch completes", async (ctx) => {
    const repo = await makeRepo();
    const gate = join(tempDir('lanes-gate-'), 'never'); // A sleeps until it is stopped
    const plan = writePlan('dc', [
      {
        id: 'A',
        goal: 'sleeps',
        scope: ['a.txt'],
        acceptance: [{ id: 'a', run: 'test -f a.txt' }],
        run: `printf 'started\\n' > a.txt; ${waitFor(gate)}`,
      },
      {
        id: 'B',
        goal: 'quick',
        scope: ['b.txt'],
        acceptance: [{ id: 'b', run: 'test -f b.txt' }],
        run: 'echo b > b.txt',
      },
    ]);
    const start = spawnCli(ctx, ['-C', repo, 'start', plan, '--yes', '--headless']);
    await until(
      () => {
        const r = readRecord(repo, 'dc');
        return (
          r &&
          child(r, 'B').state === 'released' &&
          existsSync(join(child(r, 'A').lane?.path ?? '/nope', 'a.txt'))
        );
      },
      'B released and A at work',
      { timeoutMs: 90_000 },
    );
    const attempt = kernelOf(repo, 'dc', 'A').attempts.at(-1)!;
    const dropped = await lanes(repo, 'drop', 'dc', 'A');
    expect(dropped.exitCode, dropped.stderr).toBe(0);
    expect(dropped.stderr).toContain(`run by pid ${start.pid}`);
    const coordinator = await start;
    expect(coordinator.exitCode, String(coordinator.stderr)).toBe(0);
    const record = readRecord(repo, 'dc')!;
    expect(record.batch_state).toBe('completed');
    expect(child(record, 'A')).toMatchObject({ state: 'dropped', reason: 'dropped by the user' });
    expect(isSameProcessAlive(attempt.pid!, attempt.pid_start)).toBe(false);
    expect(await fileAt(repo, 'lane/dc/A', 'a.txt')).toBe('started');
    expect(existsSync(join(stateDir(repo), 'trash', 'dc', 'A', 'a.txt'))).toBe(true);
    expect(await integratedTasks(repo, 'dc')).toEqual(['B']);
    // The stopped executor did not count as a suspect dispatch, and its exit moved nothing.
    expect(journal(repo, 'dc').some((e) => e.event === 'suspect-dispatch')).toBe(false);
    expect(existsSync(join(stateDir(repo), 'batches', 'dc', 'requests'))).toBe(true);
    expect(readdirSync(join(stateDir(repo), 'batches', 'dc', 'requests'))).toEqual([]);
  }, 180_000);
});

describe('lanes cancel', () => {
  it('cancels a running coordinator with a sleeping executor: stopped in seconds, work kept on the lane branch', async (ctx) => {
    const repo = await makeRepo();
    const gate = join(tempDir('lanes-gate-'), 'never'); // never written: A sleeps until it is stopped
    const plan = writePlan('cx', [
      {
        id: 'A',
        goal: 'sleeps',
        scope: ['a.txt'],
        acceptance: [{ id: 'a', run: 'test -f a.txt' }],
        run: `printf 'half done\\n' > a.txt; ${waitFor(gate)}`,
      },
      {
        id: 'B',
        goal: 'quick',
        scope: ['b.txt'],
        acceptance: [{ id: 'b', run: 'test -f b.txt' }],
        run: 'echo b > b.txt',
      },
    ]);
    const start = spawnCli(ctx, ['-C', repo, 'start', plan, '--yes', '--headless']);
    await until(
      () => {
        const r = readRecord(repo, 'cx');
        return (
          r &&
          child(r, 'B').state === 'released' &&
          existsSync(join(child(r, 'A').lane?.path ?? '/nope', 'a.txt'))
        );
      },
      'B released and A at work',
      { timeoutMs: 90_000 },
    );
    const attempt = kernelOf(repo, 'cx', 'A').attempts.at(-1)!;
    expect(isSameProcessAlive(attempt.pid!, attempt.pid_start)).toBe(true);
    const lanePath = child(readRecord(repo, 'cx'), 'A').lane!.path;

    const cancelled = await lanes(repo, 'cancel', 'cx');
    expect(cancelled.exitCode, cancelled.stderr).toBe(0);
    expect(cancelled.stderr).toContain(`run by pid ${start.pid}`);
    const coordinator = await start;
    expect(coordinator.exitCode, String(coordinator.stderr)).toBe(4);
    const record = readRecord(repo, 'cx')!;
    expect(record.batch_state).toBe('cancelled');
    expect(child(record, 'A')).toMatchObject({ state: 'dropped', reason: 'batch cancelled' });
    expect(child(record, 'B').state).toBe('released');
    expect(isSameProcessAlive(attempt.pid!, attempt.pid_start)).toBe(false);
    // Nothing lost: A's unfinished work is a commit on its lane branch; its worktree is in the trash.
    expect(await fileAt(repo, 'lane/cx/A', 'a.txt')).toBe('half done');
    expect(existsSync(lanePath)).toBe(false);
    expect(readReport(repo, 'cx').batch_state).toBe('cancelled');
    expect(await integratedTasks(repo, 'cx')).toEqual(['B']);

    // wait on a cancelled batch: 4; cancel again changes nothing; resume: it has ended.
    expect((await lanes(repo, 'wait', 'cx', '--until', 'completed')).exitCode).toBe(4);
    const twice = await lanes(repo, 'cancel', 'cx');
    expect(twice.exitCode, twice.stderr).toBe(0);
    expect(readRecord(repo, 'cx')).toEqual(record);
    expect(await fileAt(repo, 'lane/cx/A', 'a.txt')).toBe('half done');
    const resumed = await lanes(repo, 'resume', 'cx', '--headless');
    expect(resumed.exitCode).toBe(4);
    expect(resumed.stderr).toContain('has ended (cancelled)');
    // Another ended batch cannot be cancelled.
    expect((await lanes(repo, 'drop', 'cx', 'A')).exitCode).toBe(2);
  }, 180_000);

  it('cancels a parked batch with no coordinator running', async () => {
    const repo = await makeRepo();
    const plan = writePlan(
      'cy',
      [
        {
          id: 'A',
          goal: 'never passes',
          scope: ['a.txt'],
          acceptance: [{ id: 'never', run: 'false' }],
          run: 'echo a > a.txt',
        },
      ],
      { budget: { max_children: 1, qa_failure_limit: 1 } },
    );
    expect((await lanes(repo, 'start', plan, '--yes', '--headless')).exitCode).toBe(3);
    const r = await lanes(repo, 'cancel', 'cy');
    expect(r.exitCode, r.stderr).toBe(0);
    expect(readRecord(repo, 'cy')!.batch_state).toBe('cancelled');
    expect(await fileAt(repo, 'lane/cy/A', 'a.txt')).toBe('a');
    expect((await lanes(repo, 'status', 'cy')).stdout).toContain('cancelled');
  }, 120_000);
});

describe('budget_stopped is not a dead end', () => {
  it('resume --approve --budget N goes on; a smaller or equal budget is refused with 2, nothing written', async () => {
    const repo = await makeRepo();
    const kids = ['A', 'B', 'C'].map((id) => ({
      id,
      goal: `write ${id}`,
      scope: [`${id}.txt`],
      acceptance: [{ id: 'exists', run: `test -f ${id}.txt` }],
      run: `echo ${id} > ${id}.txt`,
    }));
    const plan = writePlan('bu', kids, { max_parallel: 1, budget: { max_children: 1, qa_failure_limit: 3 } });
    const first = await lanes(repo, 'start', plan, '--yes', '--headless');
    expect(first.exitCode, first.stderr).toBe(3);
    expect(readRecord(repo, 'bu')!.batch_state).toBe('budget_stopped');
    expect(readReport(repo, 'bu').next_action).toContain('lanes resume bu --approve --budget 2');

    const waited = await lanes(repo, 'wait', 'bu', '--until', 'completed');
    expect(waited.exitCode).toBe(3);

    const before = snapshotTree(stateDir(repo));
    for (const args of [
      ['resume', 'bu', '--approve', '--budget', '1', '--headless'],
      ['resume', 'bu', '--approve', '--headless'],
      ['resume', 'bu', '--budget', '5', '--headless'],
      ['resume', 'bu', '--approve', '--budget', 'many', '--headless'],
    ]) {
      const r = await lanes(repo, ...args);
      expect(r.exitCode, `${args.join(' ')}: ${r.stderr}`).toBe(2);
    }
    expect(snapshotTree(stateDir(repo))).toEqual(before);
    expect((await lanes(repo, 'resume', 'bu', '--headless')).exitCode).toBe(3);

    const resumed = await lanes(
      repo,
      'resume',
      'bu',
      '--approve',
      '--budget',
      '3',
      '--parallel',
      '2',
      '--headless',
    );
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    const record = readRecord(repo, 'bu')!;
    expect(record).toMatchObject({ batch_state: 'completed', max_parallel: 2, budget: { max_children: 3 } });
    expect(await integratedTasks(repo, 'bu')).toEqual(['A', 'B', 'C']);
  }, 180_000);
});
