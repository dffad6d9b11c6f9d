import {
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { copyIndex } from '../../src/git/worktree/private-index.js';
import { readExitTree, takeExitTree } from '../../src/git/delivery/exit-tree.js';
import { indexStamps, statStamp } from '../../src/git/worktree/index-entries.js';
import { LaneWorktrees } from '../../src/git/ports/lane-worktrees.js';
import { RepoGit } from '../../src/git/ports/repo-git.js';
import { RepoSessions } from '../../src/git/runner/repo-sessions.js';
import { changedPaths } from '../../src/git/worktree/worktrees.js';
import { changeTimesAlwaysMove } from '../../src/process/change-times.js';
import { git, makeRepo, tempDir } from '../helpers/repo.js';

// The lane's changes read at its executor's exit as the tree of the whole lane (exit-tree.ts),
// and git's index read for the stat data it keeps (index-entries.ts). Real git throughout:
// the paths must be what a status reads, and the tree must be what `git add` makes.

const FILES = { 'README.md': '# test\n', 'src/a.txt': 'a\n', 'src/b.txt': 'b\n', '.gitignore': 'out/\n' };

async function laneOf(repo: string): Promise<{ lane: string; base: string }> {
  const base = (await git(repo, 'rev-parse', 'HEAD')).trim();
  const lane = join(tempDir('lanes-root-'), 'L');
  await git(repo, 'worktree', 'add', '-q', '-b', 'lane/x', lane, base);
  return { lane, base };
}

function write(dir: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

describe('the stat data in an index', () => {
  it('is what lstat says of each file git added, in versions 2, 3 and 4', async () => {
    const repo = await makeRepo(FILES);
    // (a long path then a short one: version 4 strips more than 127 bytes of the one before)
    const long = `long/${'x'.repeat(150)}.txt`;
    write(repo, {
      'src/a.txt': 'changed\n',
      'deep/er/c.txt': 'c\n',
      'i-t-a.txt': 'later\n',
      [long]: 'l\n',
      'm.txt': 'm\n',
    });
    await git(repo, 'add', 'src/a.txt', 'deep/er/c.txt', long, 'm.txt');
    await git(repo, 'add', '-N', 'i-t-a.txt'); // (an extended-flags entry: version 3)
    const index = join(repo, '.git', 'index');
    const wanted = new Set(['src/a.txt', 'deep/er/c.txt', 'README.md', 'no/such', long, 'm.txt']);
    const expected = (path: string) => statStamp(lstatSync(join(repo, path), { bigint: true }));
    for (const version of ['3', '4', '2']) {
      if (version === '2') await git(repo, 'rm', '-q', '--cached', 'i-t-a.txt');
      await git(repo, 'update-index', '--index-version', version);
      expect(readFileSync(index).readUInt32BE(4)).toBe(Number(version));
      const stamps = indexStamps(index, 20, wanted);
      expect(stamps, `version ${version}`).not.toBeNull();
      expect([...stamps!.keys()].sort()).toEqual(['README.md', 'deep/er/c.txt', long, 'm.txt', 'src/a.txt']);
      for (const path of ['src/a.txt', 'deep/er/c.txt', long, 'm.txt'])
        expect(stamps!.get(path)).toBe(expected(path));
    }
  });

  it('is not read from a split index, nor from a file that is not an index', async () => {
    const repo = await makeRepo(FILES);
    await git(repo, 'update-index', '--split-index');
    expect(indexStamps(join(repo, '.git', 'index'), 20, new Set(['README.md']))).toBeNull();
    const other = join(tempDir(), 'index');
    writeFileSync(other, 'not an index');
    expect(indexStamps(other, 20, new Set(['README.md']))).toBeNull();
  });

  it('copied, keeps the mtime git compares racily clean entries with (never a later one)', async () => {
    const repo = await makeRepo(FILES);
    const from = join(repo, '.git', 'index');
    const to = join(tempDir(), 'index');
    copyIndex(from, to);
    const [a, b] = [statSync(from, { bigint: true }).mtimeNs, statSync(to, { bigint: true }).mtimeNs];
    expect(b <= a).toBe(true);
    expect(a - b < 3_000n).toBe(true);
  });
});

/** What the coordinator reads at an exit: the exit tree where it is read, else a status. */
function changedAtExit(repo: string, lane: string, base: string): Promise<string[]> {
  return new LaneWorktrees(repo).changedAtExit(lane, base);
}

describe("a lane's exit tree", () => {
  it('lists what a status lists: changed, new, deleted, a symlink, committed by the executor; not ignored files', async () => {
    const repo = await makeRepo(FILES);
    const { lane, base } = await laneOf(repo);
    const sessions = RepoSessions.of(repo);
    // (where change times move in clock ticks the exit tree is not read: a status is, as before)
    if (!changeTimesAlwaysMove(dirname(lane)))
      return expect(await readExitTree(sessions, lane, base)).toBeNull();
    write(lane, { 'src/a.txt': 'A\n', 'new/n.txt': 'n\n', 'out/build.log': 'ignored\n' });
    rmSync(join(lane, 'src', 'b.txt'));
    symlinkSync('a.txt', join(lane, 'src', 'link'));
    const paths = await readExitTree(sessions, lane, base);
    expect(paths).toEqual(await changedPaths(lane, base));
    expect(paths).toEqual(['new/n.txt', 'src/a.txt', 'src/b.txt', 'src/link']);
    // The executor commits some of it itself, and changes more afterwards.
    await git(lane, 'add', 'src/a.txt');
    await git(lane, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'mine');
    write(lane, { 'README.md': 'edited\n' });
    const again = await readExitTree(sessions, lane, base);
    expect(again).toEqual(await changedPaths(lane, base));
    expect(again).toContain('README.md');
    // The lane's own index is as the executor left it.
    expect(await git(lane, 'diff', '--cached', '--name-only')).toBe('');
  });

  it('is the delivery: the commit holds the lane as it was, and the lane reads clean after', async () => {
    const repo = await makeRepo(FILES);
    const { lane, base } = await laneOf(repo);
    write(lane, { 'src/a.txt': 'A\n', 'src/c.txt': 'c\n' });
    const port = new RepoGit(repo, join(repo, '.git'));
    const paths = await changedAtExit(repo, lane, base);
    expect(paths).toEqual(['src/a.txt', 'src/c.txt']);
    await port.stageDelivery(lane, base, paths);
    // (the exit tree taken: no delivery tree built, none left kept)
    const gitDir = join(repo, '.git', 'worktrees', 'L');
    if (changeTimesAlwaysMove(dirname(lane)))
      expect(readdirSync(gitDir).filter((f) => f.startsWith('lanes-delivery-index'))).toEqual([]);
    expect(takeExitTree(lane, base, paths)).toBeNull();
    const ids = { batch: 'b', task: 'x', run: 'r1', base };
    const commit = await port.commitDelivery(lane, 'lane/x', paths, 'goal', ids);
    expect((await git(repo, 'show', `${commit}:src/a.txt`)).trim()).toBe('A');
    expect((await git(repo, 'rev-parse', `${commit}^`)).trim()).toBe(base);
    await port.syncLaneIndex(lane, commit);
    expect(await git(lane, 'status', '--porcelain', '--untracked-files=all')).toBe('');
  });

  it('is not taken once a file of it changed after the exit: the commit holds the file as it is then', async () => {
    const repo = await makeRepo(FILES);
    const { lane, base } = await laneOf(repo);
    write(lane, { 'src/a.txt': 'A\n' });
    const port = new RepoGit(repo, join(repo, '.git'));
    const paths = await changedAtExit(repo, lane, base);
    await port.stageDelivery(lane, base, paths);
    write(lane, { 'src/a.txt': 'B\n' }); // (a check rewrote it: same size, same tick)
    const commit = await port.commitDelivery(lane, 'lane/x', paths, 'goal', {
      batch: 'b',
      task: 'x',
      run: 'r1',
      base,
    });
    expect((await git(repo, 'show', `${commit}:src/a.txt`)).trim()).toBe('B');
  });

  it('is not the delivery when some of the change is outside it', async () => {
    const repo = await makeRepo(FILES);
    const { lane, base } = await laneOf(repo);
    write(lane, { 'src/a.txt': 'A\n', 'README.md': 'not mine\n' });
    const paths = await changedAtExit(repo, lane, base);
    expect(paths).toEqual(['README.md', 'src/a.txt']);
    expect(takeExitTree(lane, base, ['src/a.txt'])).toBeNull();
    // (and nothing is kept for the lane after that)
    expect(takeExitTree(lane, base, paths)).toBeNull();
  });
});
