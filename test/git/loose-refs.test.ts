import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LooseRefs } from '../../src/git/runner/loose-refs.js';
import { RepoSessions } from '../../src/git/runner/repo-sessions.js';
import { git, makeRepo } from '../helpers/repo.js';

// Branch tips read from their loose ref files (src/git/runner/loose-refs.ts): the same
// answer as git's for every kind of branch, and no answer where the file cannot give it.

afterAll(() => RepoSessions.closeAll());

async function repo() {
  const root = await makeRepo({ 'README.md': '# test\n' });
  const head = (await git(root, 'rev-parse', 'HEAD')).trim();
  return { root, head };
}

describe('branch tips', () => {
  it('are git’s for a loose branch, a packed one, one at an annotated tag, a symbolic one and none', async () => {
    const { root, head } = await repo();
    await git(root, 'branch', 'packed', head);
    await git(root, 'pack-refs', '--all');
    await git(root, 'branch', 'batch/loose', head); // (loose: made after the packing)
    await git(root, 'branch', 'lane/b/c1', head);
    await git(root, 'tag', '-a', '-m', 'tag', 'v1', head);
    const tag = (await git(root, 'rev-parse', 'v1')).trim();
    // (git refuses to put a branch at a tag: written as a hand would)
    writeFileSync(join(root, '.git', 'refs', 'heads', 'at-tag'), `${tag}\n`);
    await git(root, 'symbolic-ref', 'refs/heads/alias', 'refs/heads/batch/loose');
    const sessions = RepoSessions.of(root);
    for (const branch of ['batch/loose', 'packed', 'lane/b/c1', 'at-tag', 'alias'])
      expect(await sessions.branchTip(branch)).toBe(head);
    expect(await sessions.branchTip('no-such')).toBeNull();

    const loose = new LooseRefs(root);
    expect(loose.branchTip('batch/loose')).toBe(head);
    expect(loose.branchTip('packed')).toBeNull();
    expect(loose.branchTip('alias')).toBeNull();
    expect(loose.branchTip('at-tag')).toBe(tag); // (RepoSessions peels it: not a commit)
  });

  it('say a branch is surely not there only with neither its loose file nor any packed refs', async () => {
    const { root, head } = await repo();
    const loose = new LooseRefs(root);
    const sessions = RepoSessions.of(root);
    expect(loose.surelyAbsent('lane/b/c9')).toBe(true);
    expect(await sessions.branchTip('lane/b/c9')).toBeNull();
    await git(root, 'branch', 'lane/b/c9', head);
    expect(loose.surelyAbsent('lane/b/c9')).toBe(false);
    await git(root, 'pack-refs', '--all'); // (packed now: only git can say)
    expect(loose.surelyAbsent('lane/b/c9')).toBe(false);
    expect(loose.surelyAbsent('lane/b/c8')).toBe(false);
    expect(await sessions.branchTip('lane/b/c9')).toBe(head);
    for (const name of ['../HEAD', 'x.lock']) expect(new LooseRefs(root).surelyAbsent(name)).toBe(false);
  });

  it('follow the branch as it moves and when it is deleted', async () => {
    const { root, head } = await repo();
    const sessions = RepoSessions.of(root);
    await git(root, 'branch', 'moving', head);
    expect(await sessions.branchTip('moving')).toBe(head);
    await git(root, 'commit', '-q', '--allow-empty', '-m', 'next');
    const next = (await git(root, 'rev-parse', 'HEAD')).trim();
    await git(root, 'update-ref', 'refs/heads/moving', next);
    expect(await sessions.branchTip('moving')).toBe(next);
    await git(root, 'branch', '-D', 'moving');
    expect(await sessions.branchTip('moving')).toBeNull();
  });

  it('are not read from a path outside refs/heads, nor from refs not kept as files', async () => {
    const { root, head } = await repo();
    const loose = new LooseRefs(root);
    for (const name of ['../HEAD', 'a/../main', '.hidden', 'x.lock', 'a//b', '/main', ''])
      expect(loose.branchTip(name)).toBeNull();
    expect(loose.branchTip('main')).toBe(head);
    rmSync(join(root, '.git', 'refs', 'heads', 'main'));
    expect(loose.branchTip('main')).toBeNull();
  });
});
