import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TestContext } from 'vitest';
import { isSameProcessAlive } from '../../src/process/process-info.js';
import { makeRepo, snapshotTree, tempDir } from '../helpers/repo.js';
import { until } from '../helpers/until.js';
import {
  writePlan,
  stateDir,
  readRecord,
  readReport,
  kernelOf,
  journal,
  child,
  integratedTasks,
  fileAt,
  spawnCli,
  waitFor,
  lanes,
} from '../helpers/ways-out.js';

// No dead ends (docs/DECISIONS.md): every stop of a batch has a way on — drop, cancel (of a
// running coordinator too), a larger budget, `wait` — driven through the built CLI as a
// user would: real git in temporary repositories, script executors, a real coordinator
// process. Nothing sleeps to synchronise. Run `npm run -s build` first.

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

    // `status` says, for the parked child, what can be done next.
    const status = await lanes(repo, 'status', 'dr');
    expect(status.stdout).toMatch(
      /→ A: fix the lane \(.*\) and resume \((lanes|node \S+)( -C \S+)? resume dr --approve, or r in the TUI\), or drop it \((lanes|node \S+)( -C \S+)? drop dr A\)/,
    );

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

/**
 * `lanes start` of a batch of A (writes `text` to a.txt, then sleeps until stopped) and B
 * (quick), returned once B is released and A is at work.
 */
async function sleeperAndQuick(ctx: TestContext, batch: string, text: string) {
  const repo = await makeRepo();
  const gate = join(tempDir('lanes-gate-'), 'never'); // never written
  const plan = writePlan(batch, [
    {
      id: 'A',
      goal: 'sleeps',
      scope: ['a.txt'],
      acceptance: [{ id: 'a', run: 'test -f a.txt' }],
      run: `printf '${text}\\n' > a.txt; ${waitFor(gate)}`,
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
      const r = readRecord(repo, batch);
      return (
        r &&
        child(r, 'B').state === 'released' &&
        existsSync(join(child(r, 'A').lane?.path ?? '/nope', 'a.txt'))
      );
    },
    'B released and A at work',
    { timeoutMs: 90_000 },
  );
  return { repo, start };
}

describe('lanes drop through a running coordinator', () => {
  it("stops the dropped child's executor; the coordinator goes on and the batch completes", async (ctx) => {
    const { repo, start } = await sleeperAndQuick(ctx, 'dc', 'started');
    const attempt = kernelOf(repo, 'dc', 'A').attempts.at(-1)!;
    const dropped = await lanes(repo, 'drop', 'dc', 'A');
    expect(dropped.exitCode, dropped.stderr).toBe(0);
    expect(dropped.stderr).toContain(`run by pid ${start.pid}`);
    // By the time `lanes drop` returns, the coordinator has moved the lane to the trash.
    expect(existsSync(join(stateDir(repo), 'trash', 'dc', 'A', 'a.txt'))).toBe(true);
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
    const { repo, start } = await sleeperAndQuick(ctx, 'cx', 'half done');
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
