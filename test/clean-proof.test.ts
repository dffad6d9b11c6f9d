import { chmodSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { provenClean } from '../src/git/clean-proof.js';
import { LaneWorktrees } from '../src/git/lane-worktrees.js';
import { RepoSessions } from '../src/git/repo-sessions.js';
import { changeTimesAlwaysMove } from '../src/process/change-times.js';
import { git, makeRepo, tempDir } from './helpers/repo.js';

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

  it('is not one a status lists anything of, ignored files included', async () => {
    const cases: [string, (lane: string) => void | Promise<void>][] = [
      ['a changed file', (l) => writeFileSync(join(l, 'src', 'a.txt'), 'A\n')],
      ['a new file', (l) => writeFileSync(join(l, 'new.txt'), 'n\n')],
      ['a new file in a new folder', (l) => mkdirSync(join(l, 'n', 'm'), { recursive: true })],
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
      // (git would not call most of them clean either; the empty folder and the rewritten
      // mode aside, where the proof is only stricter than git)
      if (what !== 'a new file in a new folder') expect(await status(), what).not.toBe('');
    }
  });

  it('is not looked for past 2,000 files: git is asked then', async () => {
    const many = Object.fromEntries(Array.from({ length: 2001 }, (_, i) => [`f/${i}.txt`, `${i}\n`]));
    const { lane, objects } = await freshLane(many);
    expect(await provenClean(objects, lane)).toBe(false);
  });

  it('goes with `git worktree remove --force`; any other lane only as git itself allows', async () => {
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
