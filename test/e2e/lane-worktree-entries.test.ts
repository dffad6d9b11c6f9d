import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { git, makeRepo, runCli, tempDir } from '../helpers/repo.js';

// A batch's lanes get their worktree entries from lanes itself, not from `git worktree add`
// and `git worktree remove` (src/git/worktree/worktree-admin.ts), and an exit's tree is
// written without `git write-tree` (index-tree.ts): those processes were four of the five
// and a half a child cost. What git sees afterwards is what its own commands leave.

/** A `git` first on PATH that logs each call's arguments, then runs the real one. */
async function loggingGit(dir: string): Promise<{ path: string; calls: () => string[] }> {
  const real = (await execa('sh', ['-c', 'command -v git'])).stdout.trim();
  const bin = join(dir, 'bin');
  const log = join(dir, 'git-calls.log');
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'git'), `#!/bin/sh\necho "$*" >> '${log}'\nexec '${real}' "$@"\n`);
  chmodSync(join(bin, 'git'), 0o755);
  writeFileSync(log, '');
  return {
    path: `${bin}:${process.env.PATH ?? ''}`,
    calls: () => readFileSync(log, 'utf8').split('\n').filter(Boolean),
  };
}

describe('lane worktrees', () => {
  it('are made, read and removed without worktree add, write-tree or worktree remove; git finds all in order', async () => {
    const repo = await makeRepo();
    const dir = tempDir();
    const n = 6;
    const plan = join(dir, 'plan.json');
    const children = Array.from({ length: n }, (_, i) => ({
      id: `c${i}`,
      goal: `write c${i}`,
      scope: [`files/c${i}.txt`],
      acceptance: [{ id: 'ok', run: ['true'] }],
      run: `mkdir -p files && echo ${i} > files/c${i}.txt`,
    }));
    writeFileSync(plan, JSON.stringify({ batch: 'wt', max_parallel: 2, executor: 'script', children }));
    const logged = await loggingGit(dir);

    const r = await runCli(['-C', repo, 'start', plan, '--yes', '--headless'], {
      env: { PATH: logged.path },
    });
    expect(r.exitCode, r.stderr).toBe(0);

    const calls = logged.calls().filter((c) => / (worktree add|worktree remove|write-tree) /.test(` ${c} `));
    expect(calls).toEqual([]);
    // Every child's change on the batch branch, and no lane left, to git's own eyes.
    const files = await git(repo, 'ls-tree', '-r', '--name-only', 'batch/wt', 'files');
    expect(files.trim().split('\n')).toEqual(children.map((c) => `files/${c.id}.txt`));
    const listed = await git(repo, 'worktree', 'list', '--porcelain');
    expect(listed.match(/^worktree /gm)).toHaveLength(1);
    expect((await git(repo, 'worktree', 'prune', '--dry-run', '--verbose')).trim()).toBe('');
    expect(readdirSync(join(repo, '.git')).filter((name) => name.startsWith('lanes-'))).toEqual([]);
    expect(await git(repo, 'branch', '--list', 'lane/*')).toBe('');
    expect((await git(repo, 'fsck', '--no-progress', '--no-dangling')).trim()).toBe('');
  });
});
