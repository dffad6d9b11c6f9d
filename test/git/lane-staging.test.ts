import { chmodSync, copyFileSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { LaneWorktrees } from '../../src/git/ports/lane-worktrees.js';
import { RepoSessions } from '../../src/git/runner/repo-sessions.js';
import { readIndex } from '../../src/git/worktree/index-entries.js';
import { stageWholeLane } from '../../src/git/worktree/lane-staging.js';
import { git, makeRepo, tempDir } from '../helpers/repo.js';

// A whole lane staged by lanes (src/git/worktree/lane-staging.ts) against `git add -A` of
// the same lane into a copy of the same index: the same entries and the same tree.

afterAll(() => RepoSessions.closeAll());

async function lane(files: Record<string, string> = { 'README.md': '# test\n', 'src/a.txt': 'a\n' }) {
  const repo = await makeRepo(files);
  const base = (await git(repo, 'rev-parse', 'HEAD')).trim();
  const path = join(tempDir(), 'lanes', 'l1');
  expect(await new LaneWorktrees(repo).add(path, 'lane/l1', base, false)).toBeNull();
  const index = join(repo, '.git', 'worktrees', 'l1', 'index');
  return { repo, path, index };
}

/** Both ways into two copies of the lane's index: ours (by lanes, or null) and git's. */
async function bothWays(repo: string, path: string, index: string) {
  const [ours, theirs] = [`${index}.ours`, `${index}.theirs`];
  copyFileSync(index, ours);
  copyFileSync(index, theirs);
  const done = await stageWholeLane(RepoSessions.of(repo), path, ours);
  await execa('git', ['-C', path, 'add', '-A'], { env: { GIT_INDEX_FILE: theirs } });
  const tree = async (file: string) =>
    (await execa('git', ['-C', path, 'write-tree'], { env: { GIT_INDEX_FILE: file } })).stdout;
  const entries = (file: string) => readIndex(file, 20, 'all')!.entries.map(({ stamp: _, ...e }) => e);
  return {
    done,
    ours: { tree: await tree(ours), entries: entries(ours) },
    theirs: { tree: await tree(theirs), entries: entries(theirs) },
  };
}

describe('a lane staged by lanes', () => {
  it('is git add -A: changed, new, deleted and executable files, a commit of the executor’s own', async () => {
    const { repo, path, index } = await lane({
      'README.md': '# test\n',
      'src/a.txt': 'a\n',
      'src/b.txt': 'b\n',
    });
    writeFileSync(join(path, 'src/a.txt'), 'changed\n');
    rmSync(join(path, 'src/b.txt'));
    mkdirSync(join(path, 'new/deep'), { recursive: true });
    writeFileSync(join(path, 'new/deep/c.txt'), 'c\n');
    writeFileSync(join(path, 'run.sh'), '#!/bin/sh\n');
    chmodSync(join(path, 'run.sh'), 0o755);
    mkdirSync(join(path, 'empty-folder'));
    const { done, ours, theirs } = await bothWays(repo, path, index);
    expect(done).toBe(true);
    expect(ours).toEqual(theirs);

    writeFileSync(join(path, 'src/a.txt'), 'committed\n');
    await git(path, 'add', '-A');
    await git(path, 'commit', '-q', '-m', 'the executor’s own');
    writeFileSync(join(path, 'after.txt'), 'after\n');
    const again = await bothWays(repo, path, index);
    expect(again.done).toBe(true);
    expect(again.ours).toEqual(again.theirs);
  });

  const notPlain: [string, (repo: string, path: string) => void][] = [
    ['a .gitignore in the lane', (_, path) => writeFileSync(join(path, '.gitignore'), '*.log\n')],
    ['a rule in info/exclude', (repo) => writeFileSync(join(repo, '.git', 'info', 'exclude'), '*.log\n')],
    ['a symbolic link', (_, path) => symlinkSync('README.md', join(path, 'link'))],
    [
      'a repository inside the lane',
      (_, path) => mkdirSync(join(path, 'inner', '.git'), { recursive: true }),
    ],
  ];
  it.each(notPlain)('is left to git for %s, the index untouched', async (_, setUp) => {
    const { repo, path, index } = await lane();
    setUp(repo, path);
    writeFileSync(join(path, 'x.log'), 'log\n');
    const before = readIndex(index, 20, 'all');
    expect(await stageWholeLane(RepoSessions.of(repo), path, index)).toBe(false);
    expect(readIndex(index, 20, 'all')).toEqual(before);
  });
});
