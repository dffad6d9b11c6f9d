import { copyFileSync, existsSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LaneWatch } from '../../../src/coordinator/executors/lane-watch.js';
import type { BatchRecord } from '../../../src/core/records/record.js';
import { changedPaths } from '../../../src/git/worktree/worktrees.js';
import { systemClock } from '../../../src/process/system-clock.js';
import { LaneWorktrees } from '../../../src/git/ports/lane-worktrees.js';
import { git, snapshotTree, tempDir } from '../../helpers/repo.js';
import { until } from '../../helpers/until.js';
import {
  events,
  fileChild,
  integratedTasks,
  lanesProcess,
  leanRepo,
  readRecord,
  recordPath,
  spawnLanes,
  stateDir,
  waitForGate,
  worktreePaths,
  writePlan,
} from './support.js';

// Drift, end to end through the built CLI (docs/RELIABILITY.md): the user changes what
// lanes works on while a batch runs — deletes a lane, leaves a lane dirty, moves the batch
// branch forwards or backwards, checks the batch branch out, truncates the state file.
// (The tick-level forms are in test/core/tick/ (lost-lane, lineage); these
// add the coordinator, its executors and the exit codes.)

const laneOf = (repo: string, batch: string, child: string) => join(`${repo}.lanes`, batch, child);
const child = (r: BatchRecord, id: string) => r.children.find((c) => c.task_id === id)!;

describe.concurrent('drift while a batch runs', () => {
  it('a lane deleted by hand: batch_lane_lost, its dependent skipped, its sibling finishes (exit 3)', async (ctx) => {
    const repo = await leanRepo();
    const gate = join(tempDir('lanes-gate-'), 'go');
    const plan = writePlan({
      batch: 'lost',
      executor: 'script',
      children: [fileChild('L', [], waitForGate(gate)), fileChild('S'), fileChild('D', ['L'])],
    });
    const run = spawnLanes(ctx, ['-C', repo, 'start', plan, '--yes', '--headless']);
    await until(
      () => {
        const e = events(repo, 'lost');
        return e.includes('executor-spawned:L') && e.includes('integrated:S');
      },
      'L to run and S to be integrated',
      { timeoutMs: 60_000 },
    );
    rmSync(laneOf(repo, 'lost', 'L'), { recursive: true, force: true }); // by hand, mid-run
    writeFileSync(gate, '');
    const result = await run;
    expect(result.exitCode, String(result.stderr)).toBe(3);
    const record = readRecord(repo, 'lost')!;
    expect(record.batch_state).toBe('needs_human');
    expect(child(record, 'L').state).toBe('needs_human');
    expect(child(record, 'L').reason).toMatch(/^batch_lane_lost: /);
    expect(child(record, 'D').state).toBe('skipped_blocked');
    expect(child(record, 'S').state).toBe('released');
    expect(await integratedTasks(repo, `${record.base_head}..batch/lost`)).toEqual(['S']);
    // The lost lane was not made again behind the user's back, nor its executor restarted.
    expect(existsSync(laneOf(repo, 'lost', 'L'))).toBe(false);
    expect(events(repo, 'lost').filter((e) => e === 'executor-spawned:L')).toHaveLength(1);
  }, 120_000);

  it('a dirty lane in the way: that child is parked, the lane and its changes are kept, the rest finishes (exit 3)', async () => {
    const repo = await leanRepo();
    const plan = writePlan({
      batch: 'dirty',
      executor: 'script',
      children: [fileChild('X'), fileChild('Y')],
    });
    // Before the batch, the user made X's lane by hand and left a change in it.
    const base = (await git(repo, 'rev-parse', 'HEAD')).trim();
    const lane = laneOf(repo, 'dirty', 'X');
    await git(repo, 'worktree', 'add', '-q', '-b', 'lane/dirty/X', lane, base);
    writeFileSync(join(lane, 'notes.txt'), 'my own work\n');
    const result = await lanesProcess(['-C', repo, 'start', plan, '--yes', '--headless']);
    expect(result.exitCode, result.stderr).toBe(3);
    const record = readRecord(repo, 'dirty')!;
    expect(child(record, 'X').state).toBe('needs_human');
    expect(child(record, 'X').reason).toContain('already exists with changes in it');
    expect(child(record, 'Y').state).toBe('released');
    expect(readFileSync(join(lane, 'notes.txt'), 'utf8')).toBe('my own work\n');
    expect(await worktreePaths(repo)).toEqual([repo, lane]);
  }, 120_000);

  it('the batch branch fast-forwarded by hand: held for a fresh approval (exit 3), then adopted, later work built on it (exit 0)', async (ctx) => {
    const repo = await leanRepo();
    const gate = join(tempDir('lanes-gate-'), 'go');
    const plan = writePlan({
      batch: 'ff',
      executor: 'script',
      max_parallel: 1,
      children: [fileChild('G', [], waitForGate(gate)), fileChild('H', ['G'])],
    });
    const run = spawnLanes(ctx, ['-C', repo, 'start', plan, '--yes', '--headless']);
    await until(() => events(repo, 'ff').includes('executor-spawned:G'), 'G to run', { timeoutMs: 60_000 });
    // By hand: one commit on top of the batch branch (plumbing; nobody's work tree touched).
    const from = (await git(repo, 'rev-parse', 'batch/ff')).trim();
    const tree = (await git(repo, 'rev-parse', `${from}^{tree}`)).trim();
    const hand = (await git(repo, 'commit-tree', tree, '-p', from, '-m', 'by hand')).trim();
    await git(repo, 'update-ref', 'refs/heads/batch/ff', hand, from);
    writeFileSync(gate, '');
    const held = await run;
    expect(held.exitCode, String(held.stderr)).toBe(3);
    expect(readRecord(repo, 'ff')!.foreign_head).toEqual({ from, to: hand, commits: [hand] });
    expect(String(held.stdout)).toContain(`by 1 commit lanes did not make (${hand.slice(0, 12)})`);
    const result = await lanesProcess(['-C', repo, 'resume', 'ff', '--approve', '--headless']);
    expect(result.exitCode, String(result.stderr)).toBe(0);
    const record = readRecord(repo, 'ff')!;
    expect(record.foreign_head).toBeUndefined();
    expect(record.batch_state).toBe('completed');
    expect(record.adopted_heads).toEqual([{ from, to: hand }]);
    await git(repo, 'merge-base', '--is-ancestor', hand, 'batch/ff');
    expect(await integratedTasks(repo, `${hand}..batch/ff`)).toEqual(['G', 'H']);
    expect(events(repo, 'ff')).toContain('head-adopted');
  }, 120_000);

  it('the batch branch reset backwards: failed, lanes in flight parked and kept (exit 4)', async (ctx) => {
    const repo = await leanRepo();
    const gate = join(tempDir('lanes-gate-'), 'go');
    const plan = writePlan({
      batch: 'back',
      executor: 'script',
      // G writes its work first, then waits for the gate: whatever comes first after the
      // reset, G's exit or a tick woken by anything else (a finished release job wakes the
      // loop once more), the lineage check parks G with its work in the lane. (G writing
      // only after the gate failed in CI when such a tick parked G, and stopped it, first.)
      children: [
        fileChild('A'),
        { ...fileChild('G'), run: `mkdir -p f && echo G > f/G.txt; ${waitForGate(gate)}` },
      ],
    });
    const run = spawnLanes(ctx, ['-C', repo, 'start', plan, '--yes', '--headless']);
    // A integrated and released (the tick after its release done), while G runs.
    await until(
      () => {
        const e = events(repo, 'back');
        return e.includes('released:A') && e.includes('executor-spawned:G') && e.at(-1) === 'tick';
      },
      'A released while G runs',
      { timeoutMs: 60_000 },
    );
    const base = readRecord(repo, 'back')!.base_head;
    await git(repo, 'update-ref', 'refs/heads/batch/back', base); // by hand: A's integration undone
    writeFileSync(gate, '');
    const result = await run;
    expect(result.exitCode, String(result.stderr)).toBe(4);
    const record = readRecord(repo, 'back')!;
    expect(record.batch_state).toBe('failed');
    expect(child(record, 'G').state).toBe('needs_human');
    expect(child(record, 'G').reason).toMatch(/^batch_head_lineage_broken/);
    // G's lane and its work are kept; nothing was integrated after the reset.
    expect(readFileSync(join(laneOf(repo, 'back', 'G'), 'f', 'G.txt'), 'utf8')).toBe('G\n');
    expect((await git(repo, 'rev-parse', 'batch/back')).trim()).toBe(base);
  }, 120_000);

  it('the batch branch checked out by the user: a clear refusal (exit 2); resume finishes once it is not', async (ctx) => {
    const repo = await leanRepo();
    const gate = join(tempDir('lanes-gate-'), 'go');
    const plan = writePlan({
      batch: 'co',
      executor: 'script',
      children: [fileChild('A', [], waitForGate(gate)), fileChild('B', ['A'])],
    });
    const run = spawnLanes(ctx, ['-C', repo, 'start', plan, '--yes', '--headless']);
    await until(() => events(repo, 'co').includes('executor-spawned:A'), 'A to run', { timeoutMs: 60_000 });
    const elsewhere = join(tempDir('lanes-user-'), 'wt');
    await git(repo, 'worktree', 'add', '-q', elsewhere, 'batch/co'); // the user's own worktree
    writeFileSync(gate, '');
    const refused = await run;
    expect(refused.exitCode).toBe(2);
    expect(String(refused.stderr)).toContain(
      `batch_branch_checked_out: batch/co is checked out in ${elsewhere}`,
    );
    const record = readFileSync(recordPath(repo, 'co'));
    // Again, by a fresh `resume`: the same refusal, and this time not one byte written.
    const before = snapshotTree(stateDir(repo));
    const again = await lanesProcess(['-C', repo, 'resume', 'co', '--headless']);
    expect(again.exitCode).toBe(2);
    expect(again.stderr).toContain('batch_branch_checked_out');
    expect(snapshotTree(stateDir(repo))).toEqual(before);
    expect(readFileSync(recordPath(repo, 'co'))).toEqual(record);
    await git(repo, 'worktree', 'remove', elsewhere);
    const resumed = await lanesProcess(['-C', repo, 'resume', 'co', '--headless']);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(readRecord(repo, 'co')!.batch_state).toBe('completed');
  }, 120_000);

  it('the state file truncated after a crash: exit 2 naming it, the file untouched; restored, resume finishes', async () => {
    const repo = await leanRepo();
    const plan = writePlan({
      batch: 'cut',
      executor: 'script',
      children: [fileChild('A'), fileChild('B', ['A'])],
    });
    const crashed = await lanesProcess(['-C', repo, 'start', plan, '--yes', '--headless'], {
      LANES_CRASH_AT: 'after-update-ref:1',
    });
    expect(crashed.signal).toBe('SIGKILL');
    const path = recordPath(repo, 'cut');
    const backup = `${path}.backup`;
    copyFileSync(path, backup);
    truncateSync(path, Math.floor(readFileSync(path).length / 2));
    const cut = readFileSync(path);
    const before = snapshotTree(stateDir(repo));
    const worktrees = await worktreePaths(repo);
    for (const args of [
      ['resume', 'cut', '--headless'],
      ['status', 'cut'],
      ['tick', 'cut'],
    ]) {
      const r = await lanesProcess(['-C', repo, ...args]);
      expect(r.exitCode, args.join(' ')).toBe(2);
      expect(r.stderr).toContain(`state record ${path} is invalid`);
      expect(r.stderr).toContain('not valid JSON');
    }
    expect(readFileSync(path)).toEqual(cut);
    expect(snapshotTree(stateDir(repo))).toEqual(before);
    expect(await worktreePaths(repo)).toEqual(worktrees);
    copyFileSync(backup, path);
    rmSync(backup);
    const resumed = await lanesProcess(['-C', repo, 'resume', 'cut', '--headless']);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    const record = readRecord(repo, 'cut')!;
    expect(record.batch_state).toBe('completed');
    expect(await integratedTasks(repo, `${record.base_head}..batch/cut`)).toEqual(['A', 'B']);
  }, 120_000);
});

describe('a lane that vanishes while lanes looks at it', () => {
  it('the periodic lane check and the changed-paths read take it in their stride', async () => {
    // (Before: a GitError from `git status` in the deleted folder escaped the timer-driven
    // check as an unhandled rejection and ended the coordinator with exit 1.)
    const repo = await leanRepo();
    const gone = join(tempDir('lanes-gone-'), 'lane');
    await git(repo, 'worktree', 'add', '-q', '-b', 'lane/x/L', gone);
    const base = (await git(repo, 'rev-parse', 'HEAD')).trim();
    const changes: string[] = [];
    const watch = new LaneWatch({
      scopeOf: () => ['a'],
      promptPatternsOf: () => [],
      stallTimeoutMs: 60_000,
      clock: systemClock,
      worktrees: new LaneWorktrees(repo),
      onChange: (_task, _health, what) => void changes.push(what),
    });
    watch.watch('L', null, gone, base);
    rmSync(gone, { recursive: true, force: true });
    await expect(watch.check()).resolves.toBeUndefined();
    await expect(changedPaths(gone, base)).resolves.toEqual([]);
    expect(changes).toEqual([]);
  });
});
