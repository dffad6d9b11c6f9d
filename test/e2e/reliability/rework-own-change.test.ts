import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from '../../helpers/repo.js';
import { lanesInProcess, leanRepo, readRecord } from './support.js';

// Issue 24, item 3: x and y share a scope, so y runs on x's commit. The final check blames
// x; the batch is rebuilt without x. After `lanes drop x` and `resume --approve`, y's rework
// onto the new head must carry y's own change only (its delivery against its lane base),
// not x's edit that its lane base held.

describe('a rework onto a new head carries the child its own change only', () => {
  it('a dropped sibling that the lane base held does not come back inside y', async () => {
    const repo = await leanRepo({ 's/f.txt': 'a\nb\nc\nd\n' });
    const plan = {
      batch: 'ro',
      executor: 'script',
      max_parallel: 2,
      children: [
        {
          id: 'x',
          goal: 'x',
          scope: ['s/'],
          acceptance: [{ id: 'ok', run: ['true'] }],
          run: "sed -i '1s/.*/broken/' s/f.txt",
        },
        {
          id: 'y',
          goal: 'y',
          scope: ['s/'],
          acceptance: [{ id: 'ok', run: ['true'] }],
          run: "sed -i '2s/.*/Y/' s/f.txt",
        },
      ],
      final_checks: [{ id: 'no-broken', run: '! grep -rqs broken s' }],
    };
    const path = join(tempDir('lanes-plan-'), 'ro.plan.json');
    writeFileSync(path, JSON.stringify(plan));
    const first = await lanesInProcess(['-C', repo, 'start', path, '--yes', '--headless']);
    expect(first.exitCode, first.stderr).toBe(3);
    const rec = readRecord(repo, 'ro')!;
    const y = rec.children.find((c) => c.task_id === 'y')!;
    expect(rec.children.find((c) => c.task_id === 'x')!.reason).toContain('final_check_failed');
    expect(y.reason).toContain('batch_integration_conflict: s/f.txt');
    // y ran on x's commit: its lane base holds x's edit.
    expect(await git(repo, 'show', `${y.lane!.base_head}:s/f.txt`)).toBe('broken\nb\nc\nd');
    expect((await lanesInProcess(['-C', repo, 'drop', 'ro', 'x'])).exitCode).toBe(0);

    // y's own change (line 2) against its base, applied onto a head without x: it touches
    // the line next to the one x changed, so it conflicts, and y parks lane_conflict.
    const resumed = await lanesInProcess(['-C', repo, 'resume', 'ro', '--approve', '--headless']);
    expect(resumed.exitCode, resumed.stderr).toBe(3);
    const parked = readRecord(repo, 'ro')!.children.find((c) => c.task_id === 'y')!;
    expect(parked.reason).toBe('lane_conflict: s/f.txt');
    expect(await git(repo, 'show', 'lane/ro/y:s/f.txt')).toMatch(/^<{7} [\s\S]*^={7}$[\s\S]*^>{7} /m);

    // The user resolves it in the lane: y's line kept; the batch completes without x's edit.
    writeFileSync(join(parked.lane!.path, 's/f.txt'), 'a\nY\nc\nd\n');
    const done = await lanesInProcess(['-C', repo, 'resume', 'ro', '--approve', '--headless']);
    expect(done.exitCode, done.stderr).toBe(0);
    expect(readRecord(repo, 'ro')!.batch_state).toBe('completed');
    expect(await git(repo, 'show', 'batch/ro:s/f.txt')).toBe('a\nY\nc\nd');
  }, 120_000);
});
