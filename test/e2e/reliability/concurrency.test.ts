import { existsSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { LanesError } from '../../../src/core/basics/errors.js';
import { parsePlanText } from '../../../src/core/plan/plan.js';
import { createBatch, preflight } from '../../../src/cli/start/confirm.js';
import { readLockHolder } from '../../../src/store/lock.js';
import { findRepo } from '../../../src/store/state-dir.js';
import { git, snapshotTree, tempDir } from '../../helpers/repo.js';
import { until } from '../../helpers/until.js';
import {
  events,
  fileChild,
  lanesInProcess,
  lanesProcess,
  leanRepo,
  readRecord,
  spawnLanes,
  stateDir,
  waitForGate,
  writePlan,
} from './support.js';

// Concurrency (docs/RELIABILITY.md): two coordinators on one batch, and locks left behind by
// a coordinator that was killed — taken over at once, without waiting for a staleness timeout.

describe.concurrent('two coordinators on one batch', () => {
  it('two `resume` started at once: exactly one runs, the other exits 2 naming the holder', async (ctx) => {
    const repo = await leanRepo();
    const gate = join(tempDir('lanes-gate-'), 'go');
    const plan = writePlan({
      batch: 'two',
      executor: 'script',
      children: [fileChild('A', [], waitForGate(gate))],
    });
    const confirmed = await lanesProcess(['-C', repo, 'start', plan, '--yes', '--no-run', '--headless']);
    expect(confirmed.exitCode, confirmed.stderr).toBe(0);
    const first = spawnLanes(ctx, ['-C', repo, 'resume', 'two', '--headless']);
    const second = spawnLanes(ctx, ['-C', repo, 'resume', 'two', '--headless']);
    const loser = await Promise.race([
      first.then((r) => ({ r, winner: second })),
      second.then((r) => ({ r, winner: first })),
    ]);
    expect(loser.r.exitCode).toBe(2);
    expect(String(loser.r.stderr)).toMatch(
      new RegExp(
        `batch two is (already run by another lanes|locked by a lanes that is starting up): pid ${loser.winner.pid}`,
      ),
    );
    writeFileSync(gate, '');
    const won = await loser.winner;
    expect(won.exitCode, String(won.stderr)).toBe(0);
    expect(readRecord(repo, 'two')!.batch_state).toBe('completed');
    expect(events(repo, 'two').filter((e) => e === 'executor-spawned:A')).toHaveLength(1);
  }, 120_000);

  it('two `start` of one plan at once: one batch, one run; the other exits 2', async (ctx) => {
    const repo = await leanRepo();
    const gate = join(tempDir('lanes-gate-'), 'go');
    const plan = writePlan({
      batch: 'dup',
      executor: 'script',
      children: [fileChild('A', [], waitForGate(gate))],
    });
    const a = spawnLanes(ctx, ['-C', repo, 'start', plan, '--yes', '--headless']);
    const b = spawnLanes(ctx, ['-C', repo, 'start', plan, '--yes', '--headless']);
    const loser = await Promise.race([a.then((r) => ({ r, winner: b })), b.then((r) => ({ r, winner: a }))]);
    expect(loser.r.exitCode).toBe(2);
    // Refused by the lock (naming the winner) or, when it came later, because the batch exists.
    expect(String(loser.r.stderr)).toMatch(
      new RegExp(`pid ${loser.winner.pid}|already exists|created meanwhile`),
    );
    writeFileSync(gate, '');
    const won = await loser.winner;
    expect(won.exitCode, String(won.stderr)).toBe(0);
    expect(events(repo, 'dup').filter((e) => e === 'batch-confirmed')).toHaveLength(1);
    expect(events(repo, 'dup').filter((e) => e === 'executor-spawned:A')).toHaveLength(1);
  }, 120_000);

  it('a start that passed its preflight before another created the batch does not overwrite it', async () => {
    // The window between two processes' preflight and confirmation, made deterministic.
    const repo = await leanRepo();
    const paths = await findRepo(repo);
    const plan = parsePlanText(
      'batch: race\nchildren:\n  - { id: A, goal: g, scope: [a], acceptance: [{ id: ok, run: ["true"] }] }\n',
      'race.yaml',
      YAML,
    );
    const first = await preflight(paths, plan, {});
    const second = await preflight(paths, plan, {});
    await createBatch(paths, plan, first, new Date());
    const before = snapshotTree(join(repo, '.git'));
    await expect(createBatch(paths, plan, second, new Date())).rejects.toSatisfy(
      (e: unknown) => e instanceof LanesError && e.code === 'batch_exists' && e.exitCode === 2,
    );
    expect(snapshotTree(join(repo, '.git'))).toEqual(before);
  });

  it('a batch branch made elsewhere between preflight and confirmation is left alone; one at the base is taken', async () => {
    const repo = await leanRepo();
    const paths = await findRepo(repo);
    const planOf = (batch: string) =>
      parsePlanText(
        `batch: ${batch}\nchildren:\n  - { id: A, goal: g, scope: [a], acceptance: [{ id: ok, run: ["true"] }] }\n`,
        `${batch}.yaml`,
        YAML,
      );
    const moved = planOf('moved');
    const checked = await preflight(paths, moved, {});
    writeFileSync(join(repo, 'other.txt'), 'other\n');
    await git(repo, 'add', 'other.txt');
    await git(repo, 'commit', '-q', '-m', 'other');
    const other = (await git(repo, 'rev-parse', 'HEAD')).trim();
    await git(repo, 'branch', 'batch/moved', other);
    const before = snapshotTree(join(repo, '.git'));
    await expect(createBatch(paths, moved, checked, new Date())).rejects.toSatisfy(
      (e: unknown) =>
        e instanceof LanesError && e.code === 'batch_exists' && /moved meanwhile/.test(e.message),
    );
    expect(snapshotTree(join(repo, '.git'))).toEqual(before);
    // A branch at the base and no record: what a start interrupted after making the branch leaves.
    const resumed = planOf('again');
    const again = await preflight(paths, resumed, {});
    await git(repo, 'branch', 'batch/again', again.baseHead);
    await createBatch(paths, resumed, again, new Date());
    expect((await git(repo, 'rev-parse', 'batch/again')).trim()).toBe(again.baseHead);
    expect(readRecord(repo, 'again')?.batch_state).toBe('prepared');
  });
});

describe.concurrent('a lock left by a killed coordinator', () => {
  it('kill -9 mid-run, then resume: the lock is taken over at once and the batch finishes', async (ctx) => {
    const repo = await leanRepo();
    const gate = join(tempDir('lanes-gate-'), 'go');
    const plan = writePlan({
      batch: 'stale',
      executor: 'script',
      children: [fileChild('A', [], waitForGate(gate)), fileChild('B', ['A'])],
    });
    const victim = spawnLanes(ctx, ['-C', repo, 'start', plan, '--yes', '--headless']);
    await until(() => events(repo, 'stale').includes('executor-spawned:A'), 'A to run', {
      timeoutMs: 60_000,
    });
    expect(readLockHolder(stateDir(repo), 'stale')?.pid).toBe(victim.pid);
    process.kill(victim.pid!, 'SIGKILL');
    expect((await victim).signal).toBe('SIGKILL');
    const lockDir = join(stateDir(repo), 'locks', 'stale.lock');
    expect(existsSync(lockDir)).toBe(true); // left behind
    // Fresh in proper-lockfile's eyes (its staleness is 10 s of no heartbeat): only the dead
    // holder's pid can let the next coordinator in now.
    utimesSync(lockDir, new Date(), new Date());
    writeFileSync(gate, '');
    const resumed = await lanesProcess(['-C', repo, 'resume', 'stale', '--headless']);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stderr).not.toContain('lock');
    const resumedAt = events(repo, 'stale').indexOf('executor-reattached:A');
    expect(resumedAt, 'the resume found the executor the killed coordinator started').toBeGreaterThan(0);
    expect(readRecord(repo, 'stale')!.batch_state).toBe('completed');
  }, 120_000);

  it('a coordinator killed between taking the lock and naming itself: the next one takes over at once', async () => {
    const repo = await leanRepo();
    const plan = writePlan({ batch: 'nameless', executor: 'script', children: [fileChild('A')] });
    const crashed = await lanesProcess(['-C', repo, 'start', plan, '--yes', '--no-run', '--headless'], {
      LANES_CRASH_AT: 'atomic-write-before-rename@holder.json',
    });
    expect(crashed.signal).toBe('SIGKILL');
    expect(existsSync(join(stateDir(repo), 'locks', 'nameless.lock'))).toBe(true);
    expect(readLockHolder(stateDir(repo), 'nameless')).toBeNull(); // no holder file: "starting up"
    const lockDir = join(stateDir(repo), 'locks', 'nameless.lock');
    utimesSync(lockDir, new Date(), new Date()); // not stale: only its dead intent lets the next one in
    const again = await lanesInProcess(['-C', repo, 'start', plan, '--yes', '--no-run', '--headless']);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(readRecord(repo, 'nameless')!.batch_state).toBe('prepared');
    expect((await git(repo, 'rev-parse', 'batch/nameless')).trim()).toBe(
      readRecord(repo, 'nameless')!.base_head,
    );
  }, 60_000);
});
