import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, makeRepo, tempDir } from '../helpers/repo.js';
import { until } from '../helpers/until.js';
import {
  writePlan,
  readRecord,
  readReport,
  journal,
  child,
  integratedTasks,
  fileAt,
  handCommit,
  spawnCli,
  waitFor,
  lanes,
} from '../helpers/ways-out.js';

// No dead ends (docs/DECISIONS.md): a child whose lane commit no longer integrates is
// brought onto the current batch head in its lane on resume — driven through the built CLI
// as a user would, with real git. Nothing sleeps to synchronise. Run `npm run -s build` first.

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
    // The hand commit is not built on until a fresh approval adopts it.
    expect(readRecord(repo, 'cf')!.foreign_head).toMatchObject({ to: hand, commits: [hand] });
    const adopted = await lanes(repo, 'resume', 'cf', '--approve', '--headless');
    expect(adopted.exitCode, adopted.stderr).toBe(3);
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
    // The hand commit is not built on until a fresh approval adopts it.
    expect(readRecord(repo, 'ck')!.foreign_head).toMatchObject({ to: hand, commits: [hand] });
    expect((await lanes(repo, 'resume', 'ck', '--approve', '--headless')).exitCode).toBe(3);
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
