import { lstatSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { processHelper } from '../../src/git/runner/git-helper.js';
import { BASE_ARGS, isWorktreeBookkeeping } from '../../src/git/runner/git.js';
import { RepoGit } from '../../src/git/ports/repo-git.js';
import { git, makeRepo, tempDir } from '../helpers/repo.js';
import { until } from '../helpers/until.js';

// git's list of worktrees is not locked: `git worktree` (and `git branch`, which reads every
// worktree's HEAD) run side by side die on each other's half-made entries. lanes runs them
// one at a time (src/git/git.ts, the helper's serial queue), and nothing else waits.

describe('worktree bookkeeping', () => {
  it('is what reads or changes the list of worktrees', () => {
    expect(isWorktreeBookkeeping([...BASE_ARGS, 'worktree', 'add', '-b', 'x', '/p', 'HEAD'])).toBe(true);
    expect(isWorktreeBookkeeping(['worktree', 'remove', '/p'])).toBe(true);
    expect(isWorktreeBookkeeping([...BASE_ARGS, 'branch', '-D', 'x'])).toBe(true);
    expect(isWorktreeBookkeeping([...BASE_ARGS, 'status', '--porcelain'])).toBe(false);
    expect(isWorktreeBookkeeping(['-C', '/repo', 'merge-tree', 'a', 'b'])).toBe(false);
    // (a path or an argument named so is no subcommand)
    expect(isWorktreeBookkeeping(['add', '--', 'worktree'])).toBe(false);
  });

  it('runs one serial request at a time, in order, while the others run beside them', async () => {
    const helper = processHelper();
    expect(helper).not.toBeNull();
    const repo = await makeRepo();
    const log = join(tempDir(), 'order.log');
    writeFileSync(log, '');
    // A git alias that is a shell command: a git process that takes a while, and says when.
    const slow = (name: string) => [
      '-c',
      `alias.slow=!f() { echo "$1 start" >> '${log}'; sleep 0.3; echo "$1 end" >> '${log}'; }; f`,
      'slow',
      name,
    ];
    const done: string[] = [];
    const ask = (name: string, argv: string[], serial: boolean) =>
      helper!.run({ cwd: repo, argv, env: {}, serial }).then((r) => {
        expect(r.exitCode).toBe(0);
        done.push(name);
      });
    await Promise.all([
      ask('first', slow('first'), true),
      ask('second', slow('second'), true),
      ask('beside', ['--version'], false),
    ]);
    expect(readFileSync(log, 'utf8').split('\n').filter(Boolean)).toEqual([
      'first start',
      'first end',
      'second start',
      'second end',
    ]);
    expect(done).toEqual(['beside', 'first', 'second']);
  });
});

describe("a delivery's tree built while QA runs", () => {
  async function lane() {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const base = (await git(repo, 'rev-parse', 'HEAD')).trim();
    const path = join(tempDir(), 'lane');
    await git(repo, 'worktree', 'add', '-q', '-b', 'lane/x', path, base);
    return { repo, base, path, port: new RepoGit(repo, join(repo, '.git')) };
  }
  const ids = (base: string) => ({ batch: 'b', task: 'x', run: 'r1', base });
  /** Until the file system's clock has moved past `file`'s last change (its times move in ticks). */
  const clockPast = (dir: string, file: string) =>
    until(() => {
      const probe = join(dir, '.clock-probe');
      writeFileSync(probe, '');
      return lstatSync(probe, { bigint: true }).ctimeNs > lstatSync(file, { bigint: true }).ctimeNs;
    }, `the clock to move past ${file}`);
  const gitDirOf = async (lane: string) => (await git(lane, 'rev-parse', '--absolute-git-dir')).trim();

  it('is the commit when its files did not change meanwhile', async () => {
    const l = await lane();
    writeFileSync(join(l.path, 'a.txt'), 'staged\n');
    await clockPast(tempDir(), join(l.path, 'a.txt'));
    await l.port.stageDelivery(l.path, l.base, ['a.txt']);
    // The staged private index becomes the lane's index (a link, then a rename): the same file.
    const stamp = (file: string) => {
      const st = lstatSync(file, { bigint: true });
      return `${st.ino}:${st.mtimeNs}`;
    };
    const gitDir = await gitDirOf(l.path);
    const built = readdirSync(gitDir).filter((f) => f.startsWith('lanes-delivery-index'));
    expect(built).toHaveLength(1);
    const staged = stamp(join(gitDir, built[0]!));
    const commit = await l.port.commitDelivery(l.path, 'lane/x', ['a.txt'], 'goal', ids(l.base));
    expect(await git(l.repo, 'show', `${commit}:a.txt`)).toBe('staged');
    expect(stamp(join(await gitDirOf(l.path), 'index'))).toBe(staged);
    expect((await git(l.path, 'status', '--porcelain')).trim()).toBe('');
  });

  it('is built again when a file changed after it was staged (a check rewrote it, same size)', async () => {
    const l = await lane();
    writeFileSync(join(l.path, 'a.txt'), 'before the check\n');
    await l.port.stageDelivery(l.path, l.base, ['a.txt']);
    writeFileSync(join(l.path, 'a.txt'), 'AFTER  the check\n');
    const commit = await l.port.commitDelivery(l.path, 'lane/x', ['a.txt'], 'goal', ids(l.base));
    expect(await git(l.repo, 'show', `${commit}:a.txt`)).toBe('AFTER  the check');
    expect((await git(l.path, 'status', '--porcelain')).trim()).toBe('');
  });
});
