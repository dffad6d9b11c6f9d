import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { reworkLane } from '../../src/git/delivery/lane-work.js';
import { git, makeRepo, tempDir } from '../helpers/repo.js';

// The rework onto a new head with real git (issue 24, item 3): the lane ran on a base that
// held a sibling's commit X; the new head does not (the batch was rebuilt without X). The
// reworked lane holds the head's files and the lane's own change — not X's file.

describe('reworkLane', () => {
  it('applies the lane’s work against its lane base onto the head, leaving out what only the base held', async () => {
    const repo = await makeRepo({ 'README.md': '# t\n' });
    const start = (await git(repo, 'rev-parse', 'HEAD')).trim();
    writeFileSync(join(repo, 'x.txt'), 'sibling\n');
    await git(repo, 'add', 'x.txt');
    await git(repo, 'commit', '-qm', 'X');
    const laneBase = (await git(repo, 'rev-parse', 'HEAD')).trim();
    // The new head: the start and another change, without X.
    await git(repo, 'checkout', '-q', '-b', 'head', start);
    writeFileSync(join(repo, 'z.txt'), 'other\n');
    await git(repo, 'add', 'z.txt');
    await git(repo, 'commit', '-qm', 'Z');
    const head = (await git(repo, 'rev-parse', 'HEAD')).trim();
    await git(repo, 'checkout', '-q', 'main');
    // The lane: on the old base, its own change uncommitted.
    const lane = join(tempDir(), 'lane');
    await git(repo, 'worktree', 'add', '-q', '-b', 'lane/b/y', lane, laneBase);
    writeFileSync(join(lane, 'y.txt'), 'mine\n');

    const out = await reworkLane(lane, 'lane/b/y', head, { batch: 'b', task: 'y', base: laneBase }, repo);
    expect(out.conflicts).toEqual([]);
    const files = (await git(repo, 'ls-tree', '--name-only', out.commit)).split('\n').sort();
    expect(files).toEqual(['README.md', 'y.txt', 'z.txt']);
    expect((await git(lane, 'status', '--porcelain')).trim()).toBe('');
    // The work before the rework stays reachable from the lane branch (its second parent).
    const parents = (await git(repo, 'rev-list', '--parents', '-1', 'lane/b/y')).split(' ');
    expect(parents[1]).toBe(head);
  });
});
