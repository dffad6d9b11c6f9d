import { chmodSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { provenClean } from '../../src/git/worktree/clean-proof.js';
import { LaneWorktrees } from '../../src/git/ports/lane-worktrees.js';
import { RepoSessions } from '../../src/git/runner/repo-sessions.js';
import { changeTimesAlwaysMove } from '../../src/process/change-times.js';
import { git, makeRepo, tempDir } from '../helpers/repo.js';

// A lane proven clean from its files (clean-proof.ts) is removed without git's own status;
// anything a status would list, and anything the proof does not read, leaves it to git.
// Each case is checked against `git status` itself.

const FILES = {
  'README.md': '# test\n',
  'src/a.txt': 'a\n',
  'src/deep/b.txt': 'b\n',
  '.gitignore': 'out/\n',
};

async function freshLane(files: Record<string, string> = FILES) {
  const repo = await makeRepo(files);
  const lane = join(tempDir('lanes-root-'), 'L');
  await git(repo, 'worktree', 'add', '-q', '-b', 'lane/x', lane);
  const objects = RepoSessions.of(repo).objects;
  // (no index write-back: the look changes nothing the proof reads)
  const status = async () =>
    git(lane, '--no-optional-locks', 'status', '--porcelain', '--untracked-files=all', '--ignored');
  return { repo, lane, objects, status };
}

describe('a lane proven clean from its files', () => {
  it('is a lane just checked out, and not one whose file was rewritten, even as it was', async () => {
    const { lane, objects, status } = await freshLane();
    expect(changeTimesAlwaysMove(dirname(lane))).toBe(true);
    expect(await status()).toBe('');
    expect(await provenClean(objects, lane)).toBe(true);
    // The same bytes written again: clean to git (it compares the content), not proven here
    // (its stat data moved): git is asked.
    writeFileSync(join(lane, 'src', 'a.txt'), 'a\n');
    expect(await status()).toBe('');
    expect(await provenClean(objects, lane)).toBe(false);
  });

  it("reads its HEAD from the lane's files: on its branch, that branch's tip; detached, the commit there", async () => {
    const { repo, lane, objects, status } = await freshLane();
    const worktrees = new LaneWorktrees(repo);
    const headOf = (gitDir: string) => worktrees.linkedHead(gitDir);
    expect(await provenClean(objects, lane, undefined, headOf)).toBe(true);
    // A branch moved under the lane (its files now the old commit's): a status lists them.
    await git(repo, 'commit', '-q', '--allow-empty', '-m', 'next');
    await git(repo, 'update-ref', 'refs/heads/lane/x', (await git(repo, 'rev-parse', 'HEAD')).trim());
    writeFileSync(join(repo, 'moved.txt'), 'm\n');
    await git(repo, 'add', 'moved.txt');
    await git(repo, 'commit', '-q', '-m', 'moved');
    await git(repo, 'update-ref', 'refs/heads/lane/x', (await git(repo, 'rev-parse', 'HEAD')).trim());
    expect(await status()).not.toBe('');
    expect(await provenClean(objects, lane, undefined, headOf)).toBe(false);
    // Detached at the commit its files are: clean again.
    await git(lane, 'checkout', '-q', '--detach', 'HEAD@{1}');
    expect(await status()).toBe('');
    expect(await provenClean(objects, lane, undefined, headOf)).toBe(true);
  });

  it('is not one a status lists anything of, ignored files included', async () => {
    const cases: [string, (lane: string) => void | Promise<void>][] = [
      ['a changed file', (l) => writeFileSync(join(l, 'src', 'a.txt'), 'A\n')],
      ['a new file', (l) => writeFileSync(join(l, 'new.txt'), 'n\n')],
      ['an empty new folder', (l) => mkdirSync(join(l, 'n', 'm'), { recursive: true })],
      ['a deleted file', (l) => rmSync(join(l, 'src', 'deep', 'b.txt'))],
      ['an ignored file', (l) => (mkdirSync(join(l, 'out')), writeFileSync(join(l, 'out', 'x.log'), 'x'))],
      [
        'a file made a symlink',
        (l) => (rmSync(join(l, 'README.md')), symlinkSync('src/a.txt', join(l, 'README.md'))),
      ],
      ['a mode change', (l) => chmodSync(join(l, 'src', 'a.txt'), 0o755)],
      [
        'a staged change',
        async (l) => (writeFileSync(join(l, 'src', 'a.txt'), 'A\n'), await git(l, 'add', 'src/a.txt')),
      ],
      ['a nested repository', async (l) => void (await git(l, 'init', '-q', 'inner'))],
      // (a path through a file: lstat fails with ENOTDIR, which the proof must not throw)
      [
        'a folder made a file',
        (l) => (
          rmSync(join(l, 'src', 'deep'), { recursive: true }),
          writeFileSync(join(l, 'src', 'deep'), 'x')
        ),
      ],
    ];
    for (const [what, change] of cases) {
      const { lane, objects, status } = await freshLane();
      await change(lane);
      expect(await provenClean(objects, lane), what).toBe(false);
      // (git calls none of them clean but the empty folder, where the proof is only stricter)
      if (what !== 'an empty new folder') expect(await status(), what).not.toBe('');
    }
  });

  it('is looked for up to 2,000 files, not past them: git is asked then', async () => {
    const many = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`f/${i}.txt`, `${i}\n`]));
    const { repo, lane, objects } = await freshLane(many);
    expect(await provenClean(objects, lane)).toBe(true);
    writeFileSync(join(repo, 'one-more.txt'), 'x\n');
    await git(repo, 'add', 'one-more.txt');
    await git(repo, 'commit', '-q', '-m', 'one more');
    const past = join(tempDir('lanes-root-'), 'P');
    await git(repo, 'worktree', 'add', '-q', '-b', 'lane/p', past);
    expect(await git(past, '--no-optional-locks', 'status', '--porcelain')).toBe('');
    expect(await provenClean(objects, past)).toBe(false);
  }, 120_000); // (2,000 files written and checked out twice: slow on a loaded 2-core machine)

  it('is removed; a lane with a new file only as git itself allows (refused, the file kept)', async () => {
    const { repo, lane } = await freshLane();
    const worktrees = new LaneWorktrees(repo);
    expect(await worktrees.remove(lane)).toBeNull();
    const other = await freshLane();
    writeFileSync(join(other.lane, 'new.txt'), 'mine\n');
    const kept = await new LaneWorktrees(other.repo).remove(other.lane);
    expect(kept).toContain('git worktree remove failed');
    expect(await other.status()).toContain('new.txt');
  });
});
