import { existsSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { laneBranch } from '../../../src/core/basics/ids.js';
import { machineLanePath, machineRepoPath, repoId } from '../../../src/machines/protocol.js';
import { git, makeRepo } from '../../helpers/repo.js';
import { machine } from './side.js';

// A lane on a machine, op by op through the real side script: the cache made bare on first
// use, the base pushed into it with git, the lane added, worked in, checked and delivered,
// and the delivery fetched back into the coordinator's repository with git.

describe('the side script: a lane in the machine repository cache', () => {
  it('adds a lane, runs its checks, commits its delivery once (asked twice) and the delivery fetches back', async () => {
    const origin = await makeRepo({ 'README.md': '# test\n', 'src/a.txt': 'a\n' });
    const m = machine(repoId(realpathSync(origin)));
    const hello = await m.call('hello', {});
    expect(hello.root).toBe(m.root);
    expect(existsSync(join(m.root, 'sock'))).toBe(true);

    // The cache: made bare by the first op that names the repository.
    expect(await m.call('wt.list', {})).toEqual([]);
    const cache = machineRepoPath(m.root, m.repo);
    expect(await git(cache, 'rev-parse', '--is-bare-repository')).toBe('true');
    const base = await git(origin, 'rev-parse', 'HEAD');
    await git(origin, 'push', '-q', cache, `HEAD:refs/lanes/in/${base}`);

    const lane = machineLanePath(m.root, 'm1', m.repo, 'b1', 'a');
    const branch = laneBranch('b1', 'a');
    const add = { path: lane, branch, base, branchExists: false };
    expect(await m.call('wt.add', add)).toBeNull();
    expect(await m.call('wt.add', add)).toBeNull(); // (a retry: the lane is there at that base)
    expect(await m.call('wt.at', { path: lane })).toMatchObject({ branch });
    expect(await m.call('wt.list', {})).toEqual([{ path: lane, head: base, branch }]);
    expect(await m.call('wt.branchTip', { branch })).toBe(base);
    expect((await m.call('git.offerFacts', { path: lane })).sameRepository).toBe(true);
    expect(await m.call('wt.isClean', { path: lane })).toBe(true);

    writeFileSync(join(lane, 'README.md'), '# changed on the machine\n');
    writeFileSync(join(lane, 'new.txt'), 'new\n');
    const paths = await m.call('git.changedPaths', { lanePath: lane, base });
    expect(paths).toEqual(['README.md', 'new.txt']);
    expect(await m.call('wt.isClean', { path: lane })).toBe(false);

    const qa = await m.call('qa.runChecks', {
      cwd: lane,
      checks: [
        { id: 'has-new', run: ['test', '-f', 'new.txt'], timeout_ms: 10_000 },
        { id: 'says', run: 'echo from-the-check; exit 3', timeout_ms: 10_000 },
      ],
    });
    expect(qa.runs.map((r) => [r.id, r.exit_code])).toEqual([
      ['has-new', 0],
      ['says', 3],
    ]);
    expect(qa.logs.says).toBe('from-the-check\n');

    const ids = { batch: 'b1', task: 'a', run: 'run-1', base };
    const delivery = { lanePath: lane, branch, paths, goal: 'Change the readme', ids };
    const first = await m.call('git.commitDelivery', delivery);
    // A retry (its answer lost on the way) finds it: at another time a second commit would differ.
    const later = { GIT_COMMITTER_DATE: '2030-01-01T00:00:00Z', GIT_AUTHOR_DATE: '2030-01-01T00:00:00Z' };
    const again = await m.call('git.commitDelivery', delivery, later);
    expect(again).toBe(first);
    expect(await git(cache, 'rev-list', '--count', `${base}..${branch}`)).toBe('1');
    expect(await m.call('git.findDelivery', { lanePath: lane, branch, ids })).toBe(first);

    // Back at the coordinator: the lane branch fetched with git, the delivery on it.
    const mirror = `refs/lanes/machines/m1/b1/a`;
    await git(origin, 'fetch', '-q', cache, `+refs/heads/${branch}:${mirror}`);
    expect(await git(origin, 'rev-parse', mirror)).toBe(first);
    expect(await git(origin, 'rev-parse', `${first}^`)).toBe(base);
    expect(await git(origin, 'log', '-1', '--format=%s', first)).toContain('Change the readme');
    expect((await git(origin, 'show', '--name-only', '--format=', first)).split('\n')).toEqual([
      'README.md',
      'new.txt',
    ]);
    // The coordinator's repository has no worktree of the lane.
    expect((await git(origin, 'worktree', 'list', '--porcelain')).match(/^worktree /gm)).toHaveLength(1);

    // The lane removed (twice: a retry is fine), its branch deleted.
    await m.call('git.syncLaneIndex', { lanePath: lane, commit: first });
    expect(await m.call('wt.isClean', { path: lane })).toBe(true);
    expect(await m.call('wt.remove', { path: lane })).toBeNull();
    expect(await m.call('wt.remove', { path: lane })).toBeNull();
    expect(existsSync(lane)).toBe(false);
    await m.call('wt.deleteBranch', { path: lane, branch });
    expect(await m.call('wt.branchTip', { branch })).toBeNull();
  });

  it('refuses a lane path outside its root', async () => {
    const origin = await makeRepo();
    const m = machine(repoId(realpathSync(origin)));
    const base = await git(origin, 'rev-parse', 'HEAD');
    const outside = join(m.root, '..', 'elsewhere', 'lane');
    await expect(
      m.call('wt.add', { path: outside, branch: 'lane/b/a', base, branchExists: false }),
    ).rejects.toThrow(/bad_request.*outside the root/);
    expect(existsSync(outside)).toBe(false);
  });

  it('keeps a lane’s work on its branch and reworks it onto a new head, both in the cache, both fetched back', async () => {
    const origin = await makeRepo({ 'README.md': '# test\n', 'other.txt': 'one\n' });
    const m = machine(repoId(realpathSync(origin)));
    await m.call('wt.list', {});
    const cache = machineRepoPath(m.root, m.repo);
    const base = await git(origin, 'rev-parse', 'HEAD');
    await git(origin, 'push', '-q', cache, `HEAD:refs/lanes/in/${base}`);
    const lane = machineLanePath(m.root, 'm1', m.repo, 'b2', 'a');
    const branch = laneBranch('b2', 'a');
    expect(await m.call('wt.add', { path: lane, branch, base, branchExists: false })).toBeNull();
    writeFileSync(join(lane, 'work.txt'), 'work\n');
    const kept = await m.call('wt.keepWork', { path: lane, branch, base });
    expect(kept).not.toBe(base);
    expect(await m.call('wt.branchTip', { branch })).toBe(kept);

    // The batch moved on meanwhile (another file): the lane's work goes onto the new head.
    writeFileSync(join(origin, 'other.txt'), 'two\n');
    await git(origin, 'commit', '-qam', 'meanwhile');
    const head = await git(origin, 'rev-parse', 'HEAD');
    await git(origin, 'push', '-q', cache, `HEAD:refs/lanes/in/${head}`);
    const ids = { batch: 'b2', task: 'a', base };
    const rework = await m.call('git.reworkLane', { lanePath: lane, branch, head, ids });
    expect(rework.conflicts).toEqual([]);
    expect(await m.call('git.reworkLane', { lanePath: lane, branch, head, ids })).toEqual(rework); // (done already)
    await git(origin, 'fetch', '-q', cache, `+refs/heads/${branch}:refs/lanes/machines/m1/b2/a`);
    expect(await git(origin, 'rev-parse', 'refs/lanes/machines/m1/b2/a')).toBe(rework.commit);
    expect(await git(origin, 'merge-base', '--is-ancestor', head, rework.commit).then(() => true)).toBe(true);
    expect(await git(origin, 'show', `${rework.commit}:work.txt`)).toBe('work');
    expect(await git(origin, 'show', `${rework.commit}:other.txt`)).toBe('two');
  });
});
