import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LaneWorktrees } from '../../src/git/ports/lane-worktrees.js';
import { RepoSessions } from '../../src/git/runner/repo-sessions.js';
import { settingIsPlain } from '../../src/git/worktree/checkout-settings.js';
import { removeTree, writeNewFiles } from '../../src/git/worktree/lane-files-thread.js';
import { readIndex } from '../../src/git/worktree/index-entries.js';
import { checkoutLane } from '../../src/git/worktree/lane-checkout.js';
import { git, makeRepo, snapshotTree, tempDir } from '../helpers/repo.js';

// A lane checked out by lanes (src/git/worktree/lane-checkout.ts) against the same lane
// checked out by `git reset --hard`: the same files, the same index but for the stat data
// of each file, and git reads it as clean; anything not plain is left to git.

afterAll(() => RepoSessions.closeAll());

const FILES: Record<string, string> = {
  'README.md': '# test\n',
  'a-b': 'dash\n',
  'a.b': 'dot\n',
  'a/x': 'x\n',
  'a/b/c/d.txt': 'deep\n',
  'z/y z': 'space\n',
  'bin/run.sh': '#!/bin/sh\necho run\n',
  empty: '',
  '.gitignore': 'build/\n',
  '.github/w.yml': 'on: push\n',
};

async function repoWith(files: Record<string, string>, setUp?: (repo: string) => Promise<void> | void) {
  const repo = await makeRepo({ 'README.md': '# first\n' });
  const first = (await git(repo, 'rev-parse', 'HEAD')).trim();
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(repo, path, '..'), { recursive: true });
    writeFileSync(join(repo, path), text);
  }
  if (existsSync(join(repo, 'bin/run.sh'))) chmodSync(join(repo, 'bin/run.sh'), 0o755);
  await setUp?.(repo);
  await git(repo, 'add', '-A');
  await git(repo, 'commit', '-q', '-m', 'files');
  const head = (await git(repo, 'rev-parse', 'HEAD')).trim();
  return { repo, first, head, lanes: join(tempDir(), 'lanes') };
}

/** An unpopulated lane on a new branch at `at`, made as lanes makes a lane ahead. */
async function unpopulated(repo: string, lanes: string, id: string, at: string): Promise<string> {
  const lane = join(lanes, id);
  expect(await new LaneWorktrees(repo).add(lane, `lane/${id}`, at, false, false)).toBeNull();
  expect(readdirSync(lane)).toEqual(['.git']);
  return lane;
}

/** The lane's files (its `.git` file names its own entry: left out). */
function filesOf(lane: string): Record<string, string> {
  const { '.git': _, ...files } = snapshotTree(lane);
  return files;
}

const indexOf = (repo: string, id: string) =>
  readIndex(join(repo, '.git', 'worktrees', id, 'index'), 20, 'all')!;

describe('a lane checked out by lanes', () => {
  it('is the lane git reset --hard makes, its branch moved to the commit, and reads clean', async () => {
    const { repo, first, head, lanes } = await repoWith(FILES);
    const ours = await unpopulated(repo, lanes, 'ours', first);
    const theirs = await unpopulated(repo, lanes, 'theirs', first);
    expect(await checkoutLane(RepoSessions.of(repo), join(repo, '.git'), ours, head)).toBe(true);
    await git(theirs, 'reset', '--hard', '--quiet', head);

    expect(filesOf(ours)).toEqual(filesOf(theirs));
    expect(statSync(join(ours, 'bin/run.sh')).mode & 0o111).not.toBe(0);
    expect(statSync(join(ours, 'a-b')).mode & 0o111).toBe(0);
    expect((await git(repo, 'rev-parse', 'lane/ours')).trim()).toBe(head);
    expect(await git(ours, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    expect(await git(ours, 'diff-index', '--cached', 'HEAD')).toBe('');
    expect(await git(ours, 'ls-files', '-s')).toBe(await git(theirs, 'ls-files', '-s'));
    const [a, b] = [indexOf(repo, 'ours'), indexOf(repo, 'theirs')];
    expect(a.entries.map(({ stamp: _, ...e }) => e)).toEqual(b.entries.map(({ stamp: _, ...e }) => e));
    expect(a.treeExtension!.equals(b.treeExtension!)).toBe(true);
    expect(a.rootTree).toBe((await git(repo, 'rev-parse', `${head}^{tree}`)).trim());
    // (git's own commands take it as their own: a commit from it, then a clean status)
    writeFileSync(join(ours, 'a/b/new.txt'), 'new\n');
    await git(ours, 'add', '-A');
    await git(ours, 'commit', '-q', '-m', 'on top');
    expect(await git(ours, 'status', '--porcelain', '--untracked-files=all')).toBe('');
  });

  it('is what resetKeep and add give for an unpopulated lane', async () => {
    const { repo, first, head, lanes } = await repoWith(FILES);
    const wt = new LaneWorktrees(repo);
    const moved = await unpopulated(repo, lanes, 'moved', first);
    expect(await wt.resetKeep(moved, head)).toBe(true);
    expect(await wt.add(join(lanes, 'added'), 'lane/added', head, false)).toBeNull();
    for (const lane of [moved, join(lanes, 'added')]) {
      expect(await git(lane, 'status', '--porcelain', '--untracked-files=all')).toBe('');
      for (const [path, text] of Object.entries(FILES))
        expect(readFileSync(join(lane, path), 'utf8')).toBe(text);
    }
  });

  const notPlain: [string, Record<string, string>, ((repo: string) => Promise<void> | void)?][] = [
    ['a .gitattributes in the tree', { ...FILES, 'a/.gitattributes': '*.txt text eol=crlf\n' }],
    ['a symbolic link', FILES, (repo) => symlinkSync('README.md', join(repo, 'link'))],
    ['core.autocrlf', FILES, async (repo) => void (await git(repo, 'config', 'core.autocrlf', 'true'))],
    ['an unknown setting', FILES, async (repo) => void (await git(repo, 'config', 'index.version', '4'))],
    [
      'info/attributes',
      FILES,
      (repo) => writeFileSync(join(repo, '.git', 'info', 'attributes'), '* -text\n'),
    ],
    ['a name git spells otherwise elsewhere', { ...FILES, 'dir/na\u00efve.txt': 'x\n' }],
  ];
  it.each(notPlain)(
    'is left to git for %s: nothing written, and git checks it out',
    async (_, files, setUp) => {
      const { repo, first, head, lanes } = await repoWith(files, setUp);
      const lane = await unpopulated(repo, lanes, 'l', first);
      expect(await checkoutLane(RepoSessions.of(repo), join(repo, '.git'), lane, head)).toBeNull();
      expect(readdirSync(lane)).toEqual(['.git']);
      expect((await git(repo, 'rev-parse', 'lane/l')).trim()).toBe(first);
      expect(await new LaneWorktrees(repo).resetKeep(lane, head)).toBe(true);
      expect(await git(lane, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    },
  );
});

describe('a checkout by lanes cut short', () => {
  /** A lane as a kill during its checkout leaves it: branch moved, some files written, no index. */
  async function cut(extra?: (lane: string) => void) {
    const { repo, first, head, lanes } = await repoWith(FILES);
    const lane = await unpopulated(repo, lanes, 'cut', first);
    await git(repo, 'update-ref', 'refs/heads/lane/cut', head, first);
    mkdirSync(join(lane, 'a/b/c'), { recursive: true });
    writeFileSync(join(lane, 'README.md'), FILES['README.md']!);
    writeFileSync(join(lane, 'a/b/c/d.txt'), 'de'); // (cut while it was written)
    writeFileSync(join(lane, 'a-b'), '');
    writeFileSync(join(repo, '.git', 'worktrees', 'cut', 'index.lock'), 'DIRC');
    extra?.(lane);
    return { repo, head, lane, wt: new LaneWorktrees(repo) };
  }

  it('is taken back to nothing checked out, then checked out whole', async () => {
    const { repo, head, lane, wt } = await cut();
    expect(await wt.isUnpopulated(lane)).toBe(true);
    expect(readdirSync(lane)).toEqual(['.git']);
    expect(existsSync(join(repo, '.git', 'worktrees', 'cut', 'index.lock'))).toBe(false);
    expect(await wt.resetKeep(lane, head)).toBe(true);
    expect(await git(lane, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    expect(readFileSync(join(lane, 'a/b/c/d.txt'), 'utf8')).toBe('deep\n');
  });

  it('keeps a lane holding anything that is not a start of its blobs: it reads as changed', async () => {
    for (const extra of [
      (lane: string) => writeFileSync(join(lane, 'mine.txt'), 'my work\n'),
      (lane: string) => writeFileSync(join(lane, 'a-b'), 'not dash\n'),
    ]) {
      const { lane, wt } = await cut(extra);
      const before = snapshotTree(lane);
      expect(await wt.isClean(lane)).toBe(false);
      expect(await wt.isUnpopulated(lane)).toBe(false);
      expect(snapshotTree(lane)).toEqual(before);
    }
  });
});

describe('the lane files thread', () => {
  it('never makes a folder whose parent is gone (a lane removed meanwhile)', async () => {
    const root = join(tempDir(), 'gone');
    const file = { path: 'a.txt', data: Buffer.from('a'), executable: false };
    await expect(writeNewFiles(root, ['src'], [file])).rejects.toThrow(/ENOENT/);
    expect(existsSync(root)).toBe(false);
  });

  it('takes back what it made when a file is in the way', async () => {
    const root = tempDir();
    writeFileSync(join(root, 'taken.txt'), 'mine\n');
    const before = snapshotTree(root);
    const files = ['new.txt', 'src/b.txt', 'taken.txt'].map((path) => ({
      path,
      data: Buffer.from(path),
      executable: false,
    }));
    await expect(writeNewFiles(root, ['src'], files)).rejects.toThrow(/EEXIST/);
    expect(snapshotTree(root)).toEqual(before);
  });

  it('deletes a folder whole, its neighbours left, and resolves for one that is not there', async () => {
    const root = tempDir();
    mkdirSync(join(root, 'gone', 'deep', 'er'), { recursive: true });
    writeFileSync(join(root, 'gone', 'deep', 'er', 'f.txt'), 'f\n');
    writeFileSync(join(root, 'gone', 'g.txt'), 'g\n');
    writeFileSync(join(root, 'kept.txt'), 'k\n');
    await removeTree(join(root, 'gone'));
    expect(readdirSync(root)).toEqual(['kept.txt']);
    await expect(removeTree(join(root, 'never'))).resolves.toBeUndefined();
  });
});

describe('settings a checkout by lanes allows', () => {
  it.each([
    ['user.name', 'x', true],
    ['filter.lfs.clean', 'git-lfs clean -- %f', true],
    ['core.autocrlf', 'false', true],
    ['core.autocrlf', 'input', false],
    ['core.repositoryformatversion', '1', false],
    ['extensions.worktreeconfig', 'true', false],
    ['feature.manyfiles', 'true', false],
    ['core.fsmonitor', 'true', false],
  ])('%s=%s: %s', (key, value, plain) => {
    expect(settingIsPlain(key, value)).toBe(plain);
  });
});
