import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from '../helpers/repo.js';
import {
  branches,
  fileChild,
  integratedTasks,
  lanesInProcess,
  lanesProcess,
  leanRepo,
  readJournal,
  readRecord,
  worktreePaths,
} from './reliability/support.js';
import type { ChildSpec } from './reliability/support.js';

// The whole batch's final verification with real git and the real CLI: an 8-child batch
// where c3's change breaks a final check that no child's own check catches, and c5
// depends on c3. The bisection finds c3, the branch is rebuilt without c3 and c5, the
// culprit parks with its lane back; the user fixes the lane, resumes, and the batch
// completes with all 8 children's work.

const IDS = ['c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8'];
const BAD = 'c3';

function children(): ChildSpec[] {
  return IDS.map((id) => {
    const child = fileChild(id, id === 'c5' ? ['c3'] : []);
    // c3 writes "broken" into its file: its own check (the file exists) passes.
    if (id === BAD) child.run = `mkdir -p f && echo broken > f/${id}.txt`;
    return child;
  });
}

function writeFinalPlan(batch: string): string {
  const plan = {
    batch,
    executor: 'script',
    max_parallel: 2,
    children: children(),
    // No file of the batch may say "broken": only the whole batch's check sees it.
    final_checks: [{ id: 'no-broken', run: '! grep -rqs broken f' }],
  };
  const path = join(tempDir('lanes-plan-'), `${batch}.plan.json`);
  writeFileSync(path, `${JSON.stringify(plan, null, 2)}\n`);
  return path;
}

function finalRuns(repo: string, batch: string) {
  return readJournal(repo, batch).entries.filter((e) => e.event === 'final-check');
}

async function filesOn(repo: string, ref: string): Promise<string[]> {
  const out = await git(repo, 'ls-tree', '--name-only', `${ref}:f`);
  return out.split('\n').filter(Boolean).sort();
}

describe('final verification: bisection, eviction, fix and resume', () => {
  it('finds the culprit in at most 1 + ceil(log2 8) + 1 runs, evicts it and its dependent, then completes', async () => {
    const repo = await leanRepo();
    const plan = writeFinalPlan('fv');
    const started = await lanesInProcess(['-C', repo, 'start', plan, '--yes', '--headless']);
    expect(started.exitCode, started.stderr).toBe(3);

    const record = readRecord(repo, 'fv')!;
    expect(record.batch_state).toBe('needs_human');
    const state = (id: string) => record.children.find((c) => c.task_id === id)!;
    expect(state('c3').state).toBe('needs_human');
    expect(state('c3').reason).toContain('final_check_failed: no-broken');
    expect(state('c5').state).toBe('skipped_blocked');
    for (const id of ['c1', 'c2', 'c4', 'c6', 'c7', 'c8']) expect(state(id).commit).not.toBeNull();
    expect(record.final_verification).toBeUndefined();

    const runs = finalRuns(repo, 'fv');
    expect(runs.length).toBeLessThanOrEqual(1 + Math.ceil(Math.log2(8)) + 1);
    expect(runs[0]).toMatchObject({ role: 'tip', passed: false });
    // Each run's output is kept in the batch's logs.
    const log = (runs[0]!.logs as string[])[0]!;
    expect(log).toContain(join('logs', 'final'));
    expect(existsSync(log)).toBe(true);
    expect(runs.at(-1)).toMatchObject({ role: 'rebuilt', passed: true });
    const events = readJournal(repo, 'fv').entries.map((e) => e.event);
    expect(events).toContain('culprit-found');
    expect(events.filter((e) => e === 'bisect-step').length).toBeLessThanOrEqual(3);

    // The batch branch: without c3 and c5, green, and each integration commit recorded.
    expect(await filesOn(repo, 'batch/fv')).toEqual(
      ['c1', 'c2', 'c4', 'c6', 'c7', 'c8'].map((id) => `${id}.txt`),
    );
    const grep = await execa('git', ['grep', '-q', 'broken', 'batch/fv', '--', 'f'], {
      cwd: repo,
      reject: false,
    });
    expect(grep.exitCode).toBe(1); // the final check's condition holds on the rebuilt tip
    const tip = (await git(repo, 'rev-parse', 'batch/fv')).trim();
    expect(record.commits.at(-1)).toBe(tip);
    expect(await git(repo, 'rev-list', '--first-parent', `${record.base_head}..batch/fv`)).toBe(
      [...record.commits].reverse().join('\n'),
    );
    expect(await git(repo, 'for-each-ref', 'refs/lanes/fv/pre-rebuild')).toBe('');

    // The culprit's lane was released after its integration, and is back (re-created from
    // its lane commit), its change uncommitted on top of its base.
    const journal = readJournal(repo, 'fv').entries;
    const releasedAt = journal.findIndex((e) => e.event === 'released' && e.task === 'c3');
    expect(releasedAt).toBeGreaterThanOrEqual(0);
    expect(releasedAt).toBeLessThan(journal.findIndex((e) => e.event === 'culprit-found'));
    const lane = state('c3').lane!;
    expect(existsSync(lane.path)).toBe(true);
    expect(readFileSync(join(lane.path, 'f/c3.txt'), 'utf8')).toBe('broken\n');
    expect((await git(lane.path, 'rev-parse', 'HEAD')).trim()).toBe(lane.base_head);

    // The user fixes the lane and resumes.
    writeFileSync(join(lane.path, 'f/c3.txt'), 'fixed\n');
    const resumed = await lanesInProcess(['-C', repo, 'resume', 'fv', '--approve', '--headless']);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    const done = readRecord(repo, 'fv')!;
    expect(done.batch_state).toBe('completed');
    expect(await filesOn(repo, 'batch/fv')).toEqual(IDS.map((id) => `${id}.txt`));
    expect((await git(repo, 'show', 'batch/fv:f/c3.txt')).trim()).toBe('fixed');
    expect(finalRuns(repo, 'fv').at(-1)).toMatchObject({ role: 'tip', passed: true });
    expect((await integratedTasks(repo, `${done.base_head}..batch/fv`)).sort()).toEqual(IDS);
  }, 240_000);

  it('a kill -9 in the middle of the bisection resumes it where it was', async () => {
    const repo = await leanRepo();
    const plan = writeFinalPlan('fk');
    const crashed = await lanesProcess(['-C', repo, 'start', plan, '--yes', '--headless'], {
      LANES_CRASH_AT: 'after-final-check@bisect:2',
    });
    expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
    const mid = readRecord(repo, 'fk')!;
    expect(mid.final_verification?.phase).toBe('bisect');
    const before = finalRuns(repo, 'fk').length;
    // The tip and a first probe; the second probe was killed after its run, before it was recorded.
    expect(before).toBe(2);

    const status = await lanesInProcess(['-C', repo, 'status', 'fk']);
    expect(status.stdout).toMatch(
      /final verification: bisect \(red: no-broken; commits \d\.\.\d left\), 2 runs/,
    );

    const resumed = await lanesProcess(['-C', repo, 'resume', 'fk', '--headless']);
    expect(resumed.exitCode, resumed.stderr).toBe(3);
    const runs = finalRuns(repo, 'fk');
    // Not from the start: the tip ran once; only the killed probe ran twice.
    expect(runs.filter((r) => r.role === 'tip').length).toBe(1);
    expect(runs[before]!.role).toMatch(/^bisect-/);
    expect(runs.length).toBeLessThanOrEqual(1 + 3 + 1 + 1);
    const record = readRecord(repo, 'fk')!;
    expect(record.children.find((c) => c.task_id === 'c3')!.state).toBe('needs_human');
    expect(record.children.find((c) => c.task_id === 'c5')!.state).toBe('skipped_blocked');
    expect(await filesOn(repo, 'batch/fk')).not.toContain('c3.txt');
  }, 240_000);

  it('a kill -9 after the rebuilt branch moved and before it was recorded: lineage accepts it', async () => {
    const repo = await leanRepo();
    const plan = writeFinalPlan('fr');
    const crashed = await lanesProcess(['-C', repo, 'start', plan, '--yes', '--headless'], {
      LANES_CRASH_AT: 'after-rebuild-update-ref',
    });
    expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
    const mid = readRecord(repo, 'fr')!;
    expect(mid.final_verification?.phase).toBe('evict');
    expect((await git(repo, 'rev-parse', 'batch/fr')).trim()).toBe(mid.final_verification!.rebuild!.to);
    expect(await git(repo, 'for-each-ref', '--format=%(objectname)', 'refs/lanes/fr/pre-rebuild')).toBe(
      mid.final_verification!.rebuild!.from,
    );
    const resumed = await lanesProcess(['-C', repo, 'resume', 'fr', '--headless']);
    expect(resumed.exitCode, resumed.stderr).toBe(3);
    const record = readRecord(repo, 'fr')!;
    expect(record.batch_state).toBe('needs_human');
    expect(record.commits.at(-1)).toBe((await git(repo, 'rev-parse', 'batch/fr')).trim());
    expect(await branches(repo, 'lane/fr/c5')).toEqual([]);
    expect(await worktreePaths(repo)).toContain(record.children.find((c) => c.task_id === 'c3')!.lane!.path);

    // Cleaning now would lose the culprit's lane and the evicted dependent's lane commit.
    const refused = await lanesInProcess(['-C', repo, 'clean', 'fr']);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('c3: changes in');
    expect(refused.stderr).toContain('c5: its lane commit, taken off the batch branch by an eviction');
    const forced = await lanesInProcess(['-C', repo, 'clean', 'fr', '--force']);
    expect(forced.exitCode, forced.stderr).toBe(0);
    expect(await git(repo, 'for-each-ref', '--format=%(refname)', 'refs/lanes-trash/fr/')).toBe(
      'refs/lanes-trash/fr/c3\nrefs/lanes-trash/fr/c5',
    );
    expect(await git(repo, 'for-each-ref', 'refs/lanes/fr/')).toBe('');
  }, 240_000);

  it('killed at every record write of the final step in turn, it still ends as without a crash', async () => {
    const repo = await leanRepo();
    const plan = writeFinalPlan('fc');
    const env = { LANES_CRASH_AT: 'tick-persist:final' };
    let r = await lanesProcess(['-C', repo, 'start', plan, '--yes', '--headless'], env);
    let kills = 0;
    while (r.signal === 'SIGKILL' && kills < 20) {
      kills++;
      r = await lanesProcess(['-C', repo, 'resume', 'fc', '--headless'], env);
    }
    expect(r.exitCode, r.stderr).toBe(3);
    expect(kills).toBe(8); // the 8 record writes of the final step (start, tip, 3 probes, rebuild planned, eviction recorded, done)
    const record = readRecord(repo, 'fc')!;
    expect(record.children.find((c) => c.task_id === 'c3')!.state).toBe('needs_human');
    expect(record.children.find((c) => c.task_id === 'c5')!.state).toBe('skipped_blocked');
    expect(record.final_verification).toBeUndefined();
    expect(await filesOn(repo, 'batch/fc')).toEqual(
      ['c1', 'c2', 'c4', 'c6', 'c7', 'c8'].map((id) => `${id}.txt`),
    );
    expect(record.commits.at(-1)).toBe((await git(repo, 'rev-parse', 'batch/fc')).trim());
    // A kill after a run was recorded never makes it run again: one tip run in all.
    expect(finalRuns(repo, 'fc').filter((e) => e.role === 'tip').length).toBe(1);
    expect(readJournal(repo, 'fc').unreadable).toBe(0);
  }, 300_000);
});
