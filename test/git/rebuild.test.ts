import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { replayTree, restoreLane, retireLane } from '../../src/git/batch/rebuild.js';
import { git, makeRepo, tempDir } from '../helpers/repo.js';

// The git side of a rebuild with real git: a replay is a cherry-pick of the lane's own
// change (never the evicted commit its lane was based on), and evicted lanes are put back
// or taken away without losing their lane commit.

async function commitFile(repo: string, parent: string, path: string, text: string): Promise<string> {
  const index = join(tempDir('lanes-idx-'), 'index');
  const env = { GIT_INDEX_FILE: index };
  await execa('git', ['read-tree', parent], { cwd: repo, env });
  const blob = (await execa('git', ['hash-object', '-w', '--stdin'], { cwd: repo, input: text })).stdout;
  await execa('git', ['update-index', '--add', '--cacheinfo', `100644,${blob},${path}`], { cwd: repo, env });
  const tree = (await execa('git', ['write-tree'], { cwd: repo, env })).stdout;
  return (await git(repo, 'commit-tree', tree, '-p', parent, '-m', path)).trim();
}

describe('replayTree', () => {
  it("applies only the lane's change when its base holds an evicted commit", async () => {
    const repo = await makeRepo();
    const base = (await git(repo, 'rev-parse', 'HEAD')).trim();
    const bad = await commitFile(repo, base, 'bad.txt', 'bad\n'); // the culprit's integration
    const lane = await commitFile(repo, bad, 'good.txt', 'good\n'); // a lane made after it
    const merged = await replayTree(repo, base, bad, lane);
    expect('tree' in merged).toBe(true);
    const tree = (merged as { tree: string }).tree;
    const files = (await git(repo, 'ls-tree', '--name-only', tree)).split('\n');
    expect(files).toContain('good.txt');
    expect(files).not.toContain('bad.txt');
  });

  it('names the conflicting paths', async () => {
    const repo = await makeRepo({ 'a.txt': 'one\n' });
    const base = (await git(repo, 'rev-parse', 'HEAD')).trim();
    const head = await commitFile(repo, base, 'a.txt', 'head\n');
    const lane = await commitFile(repo, base, 'a.txt', 'lane\n');
    expect(await replayTree(repo, head, base, lane)).toEqual({ conflicts: ['a.txt'] });
  });
});

describe('restoreLane and retireLane', () => {
  it('re-creates a released lane at its base with the change uncommitted, twice harmlessly', async () => {
    const repo = await makeRepo();
    const base = (await git(repo, 'rev-parse', 'HEAD')).trim();
    const laneCommit = await commitFile(repo, base, 'f.txt', 'change\n');
    const path = join(tempDir('lanes-lane-'), 'T1');
    const lane = { path, branch: 'lane/b/T1', base_head: base, lane_commit: laneCommit };
    await restoreLane(repo, lane);
    await restoreLane(repo, lane);
    expect((await git(path, 'rev-parse', 'HEAD')).trim()).toBe(base);
    expect((await git(path, 'rev-parse', '--abbrev-ref', 'HEAD')).trim()).toBe('lane/b/T1');
    expect(readFileSync(join(path, 'f.txt'), 'utf8')).toBe('change\n');
    expect(await git(path, 'status', '--porcelain')).toContain('f.txt');
  });

  it('retires a clean lane: its commit kept under the ref, worktree and branch gone; a dirty one stays', async () => {
    const repo = await makeRepo();
    const base = (await git(repo, 'rev-parse', 'HEAD')).trim();
    const path = join(tempDir('lanes-lane-'), 'T2');
    await git(repo, 'worktree', 'add', '-q', '-b', 'lane/b/T2', path, base);
    writeFileSync(join(path, 'x.txt'), 'x\n');
    await git(path, 'add', 'x.txt');
    await git(path, 'commit', '-qm', 'x');
    const laneCommit = (await git(path, 'rev-parse', 'HEAD')).trim();
    await retireLane(repo, { path, branch: 'lane/b/T2', lane_commit: laneCommit }, 'refs/lanes/b/evicted/T2');
    expect(existsSync(path)).toBe(false);
    expect(await git(repo, 'branch', '--list', 'lane/b/T2')).toBe('');
    expect((await git(repo, 'rev-parse', 'refs/lanes/b/evicted/T2')).trim()).toBe(laneCommit);

    const dirty = join(tempDir('lanes-lane-'), 'T3');
    await git(repo, 'worktree', 'add', '-q', '-b', 'lane/b/T3', dirty, base);
    writeFileSync(join(dirty, 'y.txt'), 'y\n');
    await retireLane(
      repo,
      { path: dirty, branch: 'lane/b/T3', lane_commit: null },
      'refs/lanes/b/evicted/T3',
    );
    expect(existsSync(join(dirty, 'y.txt'))).toBe(true);
    expect(await git(repo, 'branch', '--list', 'lane/b/T3')).toContain('lane/b/T3');
  });
});
