import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RepoGit } from '../../src/git/ports/repo-git.js';
import { git, makeRepo } from '../helpers/repo.js';

// The integration's merge without a merge-tree process (src/git/disjoint-merge.ts): where it
// answers, its tree is the one `git merge-tree --write-tree` writes; everywhere else the
// answer is merge-tree's own (it is not `laneChangeOnly` then).

type Change = Record<string, string | null | { exec: string }>;

/** A commit on `from` with `change` (text, null: deleted, exec: an executable file). */
async function commitOn(repo: string, from: string, change: Change, branch: string): Promise<string> {
  await git(repo, 'checkout', '-q', '-B', branch, from);
  for (const [path, what] of Object.entries(change)) {
    const full = join(repo, path);
    if (what === null) rmSync(full, { recursive: true, force: true });
    else {
      mkdirSync(dirname(full), { recursive: true });
      writeFileSync(full, typeof what === 'string' ? what : what.exec);
      if (typeof what !== 'string') chmodSync(full, 0o755);
    }
  }
  await git(repo, 'add', '-A');
  await git(repo, 'commit', '-q', '-m', branch);
  return (await git(repo, 'rev-parse', 'HEAD')).trim();
}

async function mergeBoth(head: Change, lane: Change, base = 'main') {
  const repo = await makeRepo({
    'a.txt': 'a\n',
    'src/x.ts': 'x\n',
    'src/deep/y.ts': 'y\n',
    'lib/z.txt': 'z\n',
  });
  const headCommit = Object.keys(head).length ? await commitOn(repo, base, head, 'batch') : base;
  const headSha = (await git(repo, 'rev-parse', headCommit)).trim();
  const laneCommit = await commitOn(repo, base, lane, 'lane');
  const ours = await new RepoGit(repo, join(repo, '.git')).mergeTree(headSha, laneCommit);
  const out = await git(repo, 'merge-tree', '--write-tree', '--no-messages', headSha, laneCommit).catch(
    (error: { stdout?: string }) => error.stdout ?? '',
  );
  return { ours, gitTree: out.split('\n')[0]!.trim(), conflicted: out.split('\n').length > 1 };
}

describe('the merge of a lane commit without merge-tree', () => {
  it('writes the same tree as merge-tree when both sides changed different files', async () => {
    const r = await mergeBoth(
      { 'src/deep/y.ts': 'y2\n', 'new/head/file.txt': 'h\n', 'b.txt': 'b\n' },
      {
        'src/x.ts': 'x2\n',
        'src/deep/new.ts': 'n\n',
        'lib/tool.sh': { exec: '#!/bin/sh\n' },
        'c.txt': 'c\n',
      },
    );
    expect(r.ours).toEqual({ tree: r.gitTree, laneChangeOnly: true });
  });

  it("takes the lane's own tree when the head is still the lane base", async () => {
    const r = await mergeBoth({}, { 'src/x.ts': 'x2\n' });
    expect(r.ours).toEqual({ tree: r.gitTree, laneChangeOnly: true });
  });

  for (const [name, head, lane] of [
    ['a deletion on the lane', { 'b.txt': 'b\n' }, { 'lib/z.txt': null }],
    [
      'a deletion on the head (a rename git could find)',
      { 'lib/z.txt': null, 'lib/z2.txt': 'z\n' },
      { 'c.txt': 'c\n' },
    ],
    ['the same file on both sides', { 'a.txt': 'a\nhead\n' }, { 'a.txt': 'lane\na\n' }],
  ] as const) {
    it(`leaves ${name} to merge-tree`, async () => {
      const r = await mergeBoth(head, lane);
      expect(r.conflicted).toBe(false);
      expect(r.ours).toEqual({ tree: r.gitTree });
    });
  }

  it('leaves a file on one side and a folder of the same name on the other to merge-tree (a conflict)', async () => {
    const r = await mergeBoth({ 'd/e.txt': 'e\n' }, { d: 'a file\n' });
    expect(r.conflicted).toBe(true);
    expect('conflicts' in r.ours && r.ours.conflicts.length > 0).toBe(true);
  });
});
