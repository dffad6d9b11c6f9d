import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Steward } from '../../src/coordinator/lanes/steward.js';
import { DEFAULT_CONFIG } from '../../src/core/settings/config.js';
import { LaneWorktrees } from '../../src/git/ports/lane-worktrees.js';
import { git, makeRepo, tempDir } from '../helpers/repo.js';

// A lane made ahead of its child's turn, with no files to copy and no setup, is made without
// a checkout (DESIGN §7, "Lanes made ahead"): nothing but its `.git` until it is brought to
// the batch head, which checks it out there. Real git throughout; every way such a lane can
// be met again (offered, moved, discarded, found after a crash) ends in a clean lane or none.

const FILES = { 'README.md': '# test\n', 'src/a.txt': 'a\n' };

async function setUp() {
  const repo = await makeRepo(FILES);
  const base = (await git(repo, 'rev-parse', 'HEAD')).trim();
  const worktrees = new LaneWorktrees(repo);
  const config = { ...DEFAULT_CONFIG, lanes_root: join(tempDir('lanes-root-'), '{child}') };
  const steward = new Steward(repo, 'b', config, () => tempDir('logs-'), worktrees);
  const branch = (await git(repo, 'symbolic-ref', '--short', 'HEAD')).trim();
  const provision = (task: string, head: string) => ({
    action: 'provision' as const,
    task_id: task,
    lane_branch: `lane/b/${task}`,
    base_head: head,
    machine: 'local',
  });
  return { repo, base, branch, worktrees, steward, provision };
}

async function commitOnBatchHead(repo: string, file: string): Promise<string> {
  writeFileSync(join(repo, file), `${file}\n`);
  await git(repo, 'add', file);
  await git(repo, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', file);
  return (await git(repo, 'rev-parse', 'HEAD')).trim();
}

async function statusOf(lane: string): Promise<string> {
  return git(lane, 'status', '--porcelain', '--untracked-files=all');
}

describe('a lane made ahead', () => {
  it('holds nothing but .git, reads as clean, and is checked out at the head it is brought to', async () => {
    const { repo, base, worktrees, steward, provision } = await setUp();
    const made = await steward.provision(provision('A', base), true);
    expect(made.kind).toBe('offer');
    const lane = steward.lanePath('A');
    expect(readdirSync(lane)).toEqual(['.git']);
    expect(await worktrees.isUnpopulated(lane)).toBe(true);
    expect(await worktrees.isClean(lane)).toBe(true);
    // (git itself reads it as every file deleted: lanes must not offer it like this)
    expect(await statusOf(lane)).not.toBe('');

    const head = await commitOnBatchHead(repo, 'next.txt');
    expect(await steward.bringToBase(lane, head)).toBe('moved');
    expect(await worktrees.isUnpopulated(lane)).toBe(false);
    expect(await statusOf(lane)).toBe('');
    expect((await git(lane, 'rev-parse', 'HEAD')).trim()).toBe(head);
    expect((await git(lane, 'symbolic-ref', 'HEAD')).trim()).toBe('refs/heads/lane/b/A');
    expect(readdirSync(lane).sort()).toEqual(['.git', 'README.md', 'next.txt', 'src']);
  });

  it('is checked out even when the head has not moved since it was made', async () => {
    const { base, worktrees, steward, provision } = await setUp();
    await steward.provision(provision('A', base), true);
    const lane = steward.lanePath('A');
    expect(await steward.bringToBase(lane, base)).toBe('at-base');
    expect(await worktrees.isUnpopulated(lane)).toBe(false);
    expect(await statusOf(lane)).toBe('');
    // Once checked out, the same call finds it at the base and changes nothing.
    expect(await steward.bringToBase(lane, base)).toBe('at-base');
  });

  it('is checked out as usual when its lane needs files copied or setup run', async () => {
    const { repo, base, worktrees, provision } = await setUp();
    const config = {
      ...DEFAULT_CONFIG,
      lanes_root: join(tempDir('lanes-root-'), '{child}'),
      setup: [['true']],
    };
    const steward = new Steward(repo, 'b', config, () => tempDir('logs-'), worktrees);
    await steward.provision(provision('A', base), true);
    const lane = steward.lanePath('A');
    expect(await worktrees.isUnpopulated(lane)).toBe(false);
    expect(await statusOf(lane)).toBe('');
  });

  it('is removed with its branch when it is not needed any more', async () => {
    const { repo, base, branch, steward, provision } = await setUp();
    await steward.provision(provision('A', base), true);
    const lane = steward.lanePath('A');
    expect(await steward.discard('A', 'lane/b/A', branch)).toBeNull();
    expect(existsSync(lane)).toBe(false);
    expect(await git(repo, 'branch', '--list', 'lane/b/A')).toBe('');
  });

  it('left by a crash, is checked out by the next provision before anyone looks at it', async () => {
    const { repo, base, worktrees, steward, provision } = await setUp();
    await steward.provision(provision('A', base), true);
    const lane = steward.lanePath('A');
    // A new coordinator (no memory of the lane): its provision finds the lane at the path.
    const again = await steward.provision(provision('A', base));
    expect(again).toMatchObject({ kind: 'offer', path: lane });
    expect(await worktrees.isUnpopulated(lane)).toBe(false);
    expect(await statusOf(lane)).toBe('');
    // The same after the batch head moved on.
    await steward.provision(provision('B', base), true);
    const head = await commitOnBatchHead(repo, 'later.txt');
    expect(await steward.provision(provision('B', head))).toMatchObject({ kind: 'offer' });
    const laneB = steward.lanePath('B');
    expect(await statusOf(laneB)).toBe('');
    expect((await git(laneB, 'rev-parse', 'HEAD')).trim()).toBe(head);
  });

  it('with anything put in it is a lane like any other: never reset over', async () => {
    const { repo, base, branch, worktrees, steward, provision } = await setUp();
    await steward.provision(provision('A', base), true);
    const lane = steward.lanePath('A');
    writeFileSync(join(lane, 'README.md'), 'someone wrote this\n');
    expect(await worktrees.isUnpopulated(lane)).toBe(false);
    expect(await worktrees.isClean(lane)).toBe(false);
    const head = await commitOnBatchHead(repo, 'next.txt');
    // (`reset --keep`: it moves, and what it would change of the lane's is kept)
    expect(await steward.bringToBase(lane, head)).toBe('moved');
    expect(readFileSync(join(lane, 'README.md'), 'utf8')).toBe('someone wrote this\n');
    expect(await worktrees.isClean(lane)).toBe(false);
    expect(await steward.discard('A', 'lane/b/A', branch)).toContain('has changes');
    expect(readFileSync(join(lane, 'README.md'), 'utf8')).toBe('someone wrote this\n');
  });
});
