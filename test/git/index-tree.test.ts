import { chmodSync, copyFileSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { RepoSessions } from '../../src/git/runner/repo-sessions.js';
import { writeIndexTree } from '../../src/git/worktree/index-tree.js';
import { git, makeRepo, tempDir } from '../helpers/repo.js';

// The tree an index makes, written without `git write-tree` (src/git/worktree/index-tree.ts),
// against git's own write-tree of the same index.

async function bothTrees(repo: string, index: string): Promise<[string | null, string]> {
  const ours = await writeIndexTree(RepoSessions.of(repo).trees, index, 20);
  const env = { ...process.env, GIT_INDEX_FILE: index };
  const theirs = (await execa('git', ['write-tree'], { cwd: repo, env })).stdout.trim();
  return [ours, theirs];
}

describe('an index written as a tree', () => {
  it('is the tree git writes: nested folders, new and changed files, an executable, a symlink', async () => {
    const repo = await makeRepo({
      'README.md': '# r\n',
      'a/b/c.txt': 'c\n',
      'a/d.txt': 'd\n',
      'z/y.txt': 'y\n',
    });
    const index = join(tempDir(), 'index');
    copyFileSync(join(repo, '.git', 'index'), index);
    // (git's cached tree of the copy is valid: taken as it is)
    const [cachedOurs, cachedTheirs] = await bothTrees(repo, index);
    expect(cachedOurs).toBe(cachedTheirs);
    mkdirSync(join(repo, 'a', 'new', 'deep'), { recursive: true });
    writeFileSync(join(repo, 'a', 'new', 'deep', 'n.txt'), 'n\n');
    writeFileSync(join(repo, 'a', 'd.txt'), 'D\n');
    writeFileSync(join(repo, 'run.sh'), '#!/bin/sh\n');
    chmodSync(join(repo, 'run.sh'), 0o755);
    symlinkSync('a/d.txt', join(repo, 'link'));
    rmSync(join(repo, 'z'), { recursive: true });
    await execa('git', ['add', '-A'], { cwd: repo, env: { ...process.env, GIT_INDEX_FILE: index } });
    const [ours, theirs] = await bothTrees(repo, index);
    expect(ours).toBe(theirs);
    const listed = await git(repo, 'ls-tree', '-r', ours!);
    expect(listed).toMatch(/^100755 blob \w+\trun\.sh$/m);
    expect(listed).toMatch(/^120000 blob \w+\tlink$/m);
    expect(listed).toMatch(/\ta\/new\/deep\/n\.txt$/m);
    expect(listed).not.toMatch(/\tz\//);
  });

  it('is left to git for an index with a conflict or an intent-to-add entry', async () => {
    const repo = await makeRepo({ 'README.md': '# r\n' });
    writeFileSync(join(repo, 'later.txt'), 'later\n');
    await git(repo, 'add', '--intent-to-add', 'later.txt');
    expect(await writeIndexTree(RepoSessions.of(repo).trees, join(repo, '.git', 'index'), 20)).toBeNull();
  });
});
