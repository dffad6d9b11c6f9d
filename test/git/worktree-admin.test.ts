import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LaneWorktrees } from '../../src/git/ports/lane-worktrees.js';
import { git, makeRepo, tempDir } from '../helpers/repo.js';
import { until } from '../helpers/until.js';

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

// Worktree entries lanes writes and removes itself (src/git/worktree/worktree-admin.ts),
// against what `git worktree add` writes and what git's own commands make of them.

async function lanes(): Promise<{ repo: string; base: string; dir: string; wt: LaneWorktrees }> {
  const repo = await makeRepo({ 'README.md': '# test\n', 'src/a.txt': 'a\n' });
  const base = (await git(repo, 'rev-parse', 'HEAD')).trim();
  const dir = join(tempDir(), 'lanes');
  mkdirSync(dir);
  return { repo, base, dir, wt: new LaneWorktrees(repo) };
}

function entryFiles(repo: string, id: string): { HEAD: string; commondir: string; gitdir: string } {
  const entry = join(repo, '.git', 'worktrees', id);
  const read = (name: string) => readFileSync(join(entry, name), 'utf8');
  return { HEAD: read('HEAD'), commondir: read('commondir'), gitdir: read('gitdir') };
}

describe('lane worktree entries written by lanes', () => {
  it('an add killed between its entry and its folder leaves an entry the next add of that lane drops', async () => {
    const { repo, base, dir, wt } = await lanes();
    const lane = join(dir, 'k1');
    expect(await wt.add(lane, 'lane/k1', base, false, false)).toBeNull();
    // (what a kill -9 after the entry's rename and before the folder's leaves: the entry alone)
    const { rmSync } = await import('node:fs');
    rmSync(lane, { recursive: true, force: true });
    expect(existsSync(join(repo, '.git', 'worktrees', 'k1'))).toBe(true);
    expect(await wt.add(lane, 'lane/k1', base, true, false)).toBeNull();
    expect(await wt.resetKeep(lane, base)).toBe(true);
    expect(readFileSync(join(lane, 'src', 'a.txt'), 'utf8')).toBe('a\n');
    const listed = await git(repo, 'worktree', 'list', '--porcelain');
    expect(listed).toContain(`worktree ${lane}\nHEAD ${base}\nbranch refs/heads/lane/k1\n`);
    expect(listed).not.toContain('prunable');
  });

  it('are what git worktree add --no-checkout writes, and git works in them', async () => {
    const { repo, base, dir, wt } = await lanes();
    await git(repo, 'branch', 'by-git', base);
    await git(repo, 'worktree', 'add', '-q', '--no-checkout', join(dir, 'g1'), 'by-git');
    expect(await wt.add(join(dir, 'l1'), 'lane/l1', base, false, false)).toBeNull();

    const ours = entryFiles(repo, 'l1');
    const gits = entryFiles(repo, 'g1');
    expect(ours.commondir).toBe(gits.commondir);
    expect(ours.HEAD).toBe(gits.HEAD.replace('by-git', 'lane/l1'));
    expect(ours.gitdir).toBe(gits.gitdir.replace('/g1/', '/l1/'));
    expect(readFileSync(join(dir, 'l1', '.git'), 'utf8')).toBe(
      readFileSync(join(dir, 'g1', '.git'), 'utf8').replace('/g1', '/l1'),
    );
    expect(readdirSync(join(dir, 'l1'))).toEqual(['.git']);
    expect(await wt.isUnpopulated(join(dir, 'l1'))).toBe(true);
    const listed = await git(repo, 'worktree', 'list', '--porcelain');
    expect(listed).toContain(`worktree ${join(dir, 'l1')}\nHEAD ${base}\nbranch refs/heads/lane/l1\n`);
    // Checked out, committed in, removed by git: an ordinary worktree.
    expect(await wt.resetKeep(join(dir, 'l1'), base)).toBe(true);
    expect(readFileSync(join(dir, 'l1', 'src', 'a.txt'), 'utf8')).toBe('a\n');
    writeFileSync(join(dir, 'l1', 'b.txt'), 'b\n');
    await git(join(dir, 'l1'), 'add', '-A');
    await git(join(dir, 'l1'), 'commit', '-q', '-m', 'b');
    expect((await git(repo, 'log', '-1', '--format=%s', 'lane/l1')).trim()).toBe('b');
    await git(repo, 'worktree', 'remove', join(dir, 'l1'));
    expect((await git(repo, 'worktree', 'prune', '--dry-run', '--verbose')).trim()).toBe('');
  });

  it('are checked out when asked, and removed with nothing of them left to git', async () => {
    const { repo, base, dir, wt } = await lanes();
    const lane = join(dir, 'l2');
    expect(await wt.add(lane, 'lane/l2', base, false)).toBeNull();
    expect(readFileSync(join(lane, 'src', 'a.txt'), 'utf8')).toBe('a\n');
    expect((await git(lane, 'status', '--porcelain')).trim()).toBe('');
    expect(await wt.remove(lane)).toBeNull();
    expect(existsSync(lane)).toBe(false);
    expect(existsSync(join(repo, '.git', 'worktrees', 'l2'))).toBe(false);
    expect((await git(repo, 'worktree', 'list', '--porcelain')).match(/^worktree /gm)).toHaveLength(1);
    expect(readdirSync(join(repo, '.git')).filter((n) => n.startsWith('lanes-'))).toEqual([]);
    // The branch stays (the steward deletes it), and a lane of that name can be made again.
    expect((await git(repo, 'rev-parse', 'lane/l2')).trim()).toBe(base);
    await git(repo, 'branch', '-D', 'lane/l2');
    expect(await wt.add(lane, 'lane/l2', base, false)).toBeNull();
  });

  it('leave a locked lane, a lane with changes and a name git would change to git', async () => {
    const { repo, base, dir, wt } = await lanes();
    const locked = join(dir, 'locked');
    expect(await wt.add(locked, 'lane/locked', base, false)).toBeNull();
    await git(repo, 'worktree', 'lock', locked);
    expect(await wt.remove(locked)).toMatch(/locked/);
    expect(existsSync(join(locked, 'src', 'a.txt'))).toBe(true);

    const changed = join(dir, 'changed');
    expect(await wt.add(changed, 'lane/changed', base, false)).toBeNull();
    writeFileSync(join(changed, 'src', 'a.txt'), 'A\n');
    expect(await wt.remove(changed)).toMatch(/contains modified or untracked files/);
    expect(readFileSync(join(changed, 'src', 'a.txt'), 'utf8')).toBe('A\n');

    // (git makes an entry of a name it must change, or one taken, under a name of its own)
    const odd = join(dir, 'with space');
    expect(await wt.add(odd, 'lane/odd', base, false)).toBeNull();
    expect((await git(odd, 'rev-parse', '--abbrev-ref', 'HEAD')).trim()).toBe('lane/odd');
    expect(readdirSync(join(repo, '.git', 'worktrees')).sort()).toEqual(['changed', 'locked', 'with-space']);
  });

  it('sweep what a crashed lanes left of its removals, not what a running one is doing', async () => {
    const { repo, base, dir, wt } = await lanes();
    let dead = 4_000_000;
    while (isRunning(dead)) dead--;
    const leftovers = [join(dir, `.lanes-gone-c9-${dead}-1`), join(repo, '.git', `lanes-gone-c9-${dead}-2`)];
    const running = join(dir, `.lanes-gone-c8-${process.pid}-7`);
    for (const folder of [...leftovers, running]) mkdirSync(join(folder, 'f'), { recursive: true });
    expect(await wt.add(join(dir, 'l3'), 'lane/l3', base, false)).toBeNull();
    expect(await wt.remove(join(dir, 'l3'))).toBeNull();
    await until(() => leftovers.every((f) => !existsSync(f)), 'the leftovers swept');
    expect(existsSync(running)).toBe(true);
  });
});
