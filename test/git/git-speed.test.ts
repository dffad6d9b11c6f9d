import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { changeIdentity } from '../../src/git/runner/commits.js';
import { processStartTime } from '../../src/process/process-info.js';
import { sweepScratch } from '../../src/process/scratch.js';
import { processHelper } from '../../src/git/runner/git-helper.js';
import { parseLaneStatus, readLaneStatus } from '../../src/git/worktree/lane-status.js';
import { parseTrailers } from '../../src/git/runner/object-reader.js';
import { RepoGit } from '../../src/git/ports/repo-git.js';
import { RepoSessions } from '../../src/git/runner/repo-sessions.js';
import { treeChanges } from '../../src/git/worktree/tree-diff.js';
import { worktreesFromFiles } from '../../src/git/worktree/worktree-files.js';
import { changedPaths, listWorktrees } from '../../src/git/worktree/worktrees.js';
import { runCheck } from '../../src/qa/check-runner.js';
import { git, makeRepo, tempDir } from '../helpers/repo.js';

// The fast paths of docs/DECISIONS.md "Git speed" against what plain git answers, on real
// repositories: long-lived sessions, one status, worktrees from git's files, the helper.

async function commitAll(repo: string, message: string): Promise<string> {
  await git(repo, 'add', '-A');
  await git(repo, 'commit', '-q', '-m', message);
  return (await git(repo, 'rev-parse', 'HEAD')).trim();
}

describe('long-lived git sessions', () => {
  it('resolve refs, read commits and walk ancestry as git does; a missing name is null', async () => {
    const repo = await makeRepo();
    const first = (await git(repo, 'rev-parse', 'HEAD')).trim();
    writeFileSync(join(repo, 'a.txt'), 'a\n');
    const second = await commitAll(repo, 'second\n\nLanes-Batch: b\nLanes-Task: t');
    const objects = RepoSessions.of(repo).objects;
    expect(await objects.resolve('refs/heads/main^{commit}')).toBe(second);
    expect(await objects.resolve('refs/heads/nope^{commit}')).toBeNull();
    const commit = await objects.commit(second);
    expect(commit?.parents).toEqual([first]);
    expect(commit?.trailers).toEqual({ 'Lanes-Batch': 'b', 'Lanes-Task': 't' });
    expect(commit?.author).toMatch(/^Test <test@example.com> \d+ [+-]\d{4}$/);
    expect(await objects.reaches(first, second)).toBe(true);
    expect(await objects.reaches(second, first)).toBe(false);
    // A ref moved by another process is seen at once.
    writeFileSync(join(repo, 'b.txt'), 'b\n');
    const third = await commitAll(repo, 'third');
    expect(await objects.resolve('refs/heads/main^{commit}')).toBe(third);
  });

  it('warmed, every process runs before its first request, and answers it', async () => {
    const repo = await makeRepo();
    const head = (await git(repo, 'rev-parse', 'HEAD')).trim();
    const sessions = RepoSessions.of(repo);
    sessions.warm();
    // (each a git whose working directory is this repository: read from /proc)
    const running = () =>
      readdirSync('/proc')
        .filter((pid) => /^\d+$/.test(pid))
        .flatMap((pid) => {
          try {
            if (readlinkSync(`/proc/${pid}/cwd`) !== repo) return [];
            return [
              readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).slice(5).join(' '),
            ];
          } catch {
            return []; // (gone meanwhile)
          }
        })
        .sort();
    expect(running()).toEqual([
      'cat-file --batch-command',
      'hash-object -w --no-filters --stdin-paths',
      'hash-object -w -t commit --stdin-paths',
      'mktree -z --batch',
      'update-ref --stdin',
    ]);
    expect(await sessions.objects.resolve('HEAD^{commit}')).toBe(head);
    expect(await sessions.refs.compareAndSwap('refs/heads/warm', head, '0'.repeat(40))).toBe(true);
    const tree = (await sessions.objects.commit(head))!.tree;
    expect(await sessions.trees.write(await sessions.objects.tree(tree).then((t) => t!))).toBe(tree);
    expect(running()).toHaveLength(5); // (the same processes: none started again)
  });

  it('compare-and-swap: moves only from the expected value, and goes on after a refusal', async () => {
    const repo = await makeRepo();
    const first = (await git(repo, 'rev-parse', 'HEAD')).trim();
    writeFileSync(join(repo, 'a.txt'), 'a\n');
    const second = await commitAll(repo, 'second');
    const refs = RepoSessions.of(repo).refs;
    expect(await refs.compareAndSwap('refs/heads/x', first, '0'.repeat(40))).toBe(true);
    expect(await refs.compareAndSwap('refs/heads/x', second, second)).toBe(false);
    expect((await git(repo, 'rev-parse', 'refs/heads/x')).trim()).toBe(first);
    expect(await refs.compareAndSwap('refs/heads/x', second, first)).toBe(true);
    expect((await git(repo, 'rev-parse', 'refs/heads/x')).trim()).toBe(second);
  });

  it('writes commits git accepts, with the lane commit author and the trailers', async () => {
    const repo = await makeRepo();
    writeFileSync(join(repo, 'a.txt'), 'a\n');
    const head = await commitAll(repo, 'lane\n\nLanes-Batch: b');
    const tree = (await git(repo, 'rev-parse', 'HEAD^{tree}')).trim();
    const port = new RepoGit(repo, join(repo, '.git'));
    const made = await port.integrationCommit(tree, head, head, 'Lanes-Lane-Commit: abc\n');
    expect((await git(repo, 'cat-file', '-t', made)).trim()).toBe('commit');
    const shown = await git(
      repo,
      'log',
      '-1',
      '--format=%an <%ae>|%P|%(trailers:key=Lanes-Lane-Commit,valueonly)',
      made,
    );
    expect(shown.trim()).toBe(`Test <test@example.com>|${head}|abc`);
    expect((await git(repo, 'fsck', '--no-progress', '--no-dangling')).trim()).toBe('');
  });

  it('tree changes match diff-tree, files, modes, symlinks, deletions and type changes included', async () => {
    const repo = await makeRepo({
      'keep.txt': 'k\n',
      'dir/old.txt': 'o\n',
      'file-then-dir': 'f\n',
      'run.sh': 'x\n',
    });
    const base = (await git(repo, 'rev-parse', 'HEAD')).trim();
    rmSync(join(repo, 'dir/old.txt'));
    mkdirSync(join(repo, 'dir/deep'), { recursive: true });
    writeFileSync(join(repo, 'dir/deep/new.txt'), 'n\n');
    rmSync(join(repo, 'file-then-dir'));
    mkdirSync(join(repo, 'file-then-dir'));
    writeFileSync(join(repo, 'file-then-dir/inner'), 'i\n');
    chmodSync(join(repo, 'run.sh'), 0o755);
    symlinkSync('keep.txt', join(repo, 'link'));
    const next = await commitAll(repo, 'changes');
    const objects = RepoSessions.of(repo).objects;
    const [baseTree, nextTree] = [(await objects.commit(base))!.tree, (await objects.commit(next))!.tree];
    expect(Object.fromEntries(await treeChanges(objects, baseTree, nextTree))).toEqual(
      Object.fromEntries(await changeIdentity(repo, base, next)),
    );
  });

  it('reads trailers from the last paragraph only', () => {
    expect(parseTrailers('subject\n\nbody\n\nA: 1\nB-c: two\n')).toEqual({ A: '1', 'B-c': 'two' });
    expect(parseTrailers('A: 1\n')).toEqual({});
    expect(parseTrailers('subject\n\nA: 1\nnot a trailer\n')).toEqual({});
    expect(parseTrailers('subject\n\nA: long\n  folded\n')).toEqual({ A: 'long folded' });
  });
});

describe("the commit writer's scratch folders", () => {
  it('are removed once the process that made them no longer runs (pid and start time)', async () => {
    const dir = tempDir('lanes-sweep-');
    const ended = execa('true');
    await ended;
    const start = processStartTime(process.pid)!;
    const names = {
      [`lanes-commit-${ended.pid}-1-aaaa`]: false, // its process ended
      [`lanes-commit-${process.pid}-${start}-bbbb`]: true, // this process
      [`lanes-commit-${process.pid}-${Number(start) + 1}-cccc`]: false, // the pid, reused
      'lanes-commit-dddd': true, // not named after a process: not ours to judge
      'other-eeee': true,
    };
    for (const name of Object.keys(names)) mkdirSync(join(dir, name, 'sub'), { recursive: true });
    sweepScratch('lanes-commit', dir);
    for (const [name, kept] of Object.entries(names)) expect(existsSync(join(dir, name)), name).toBe(kept);
  });
});

describe('one status for a lane', () => {
  it('gives HEAD, branch, cleanliness and the changed paths that diff + ls-files give', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' });
    const base = (await git(repo, 'rev-parse', 'HEAD')).trim();
    const clean = await readLaneStatus(repo);
    expect(clean).toMatchObject({ head: base, branch: 'main', entries: [], staged: false, paths: [] });
    writeFileSync(join(repo, 'a.txt'), 'changed\n');
    rmSync(join(repo, 'b.txt'));
    writeFileSync(join(repo, 'c.txt'), 'staged\n');
    await git(repo, 'add', 'c.txt');
    mkdirSync(join(repo, 'new'));
    writeFileSync(join(repo, 'new/file with space.txt'), 'n\n');
    writeFileSync(join(repo, '.gitignore'), 'ignored.txt\n');
    writeFileSync(join(repo, 'ignored.txt'), 'i\n');
    const status = await readLaneStatus(repo);
    expect(status?.staged).toBe(true);
    expect(status?.paths).toEqual(['.gitignore', 'a.txt', 'b.txt', 'c.txt', 'new/file with space.txt']);
    expect(await changedPaths(repo, base)).toEqual(status?.paths);
    // Staged, then changed again: status alone cannot tell, the long reading runs.
    writeFileSync(join(repo, 'c.txt'), 'c\n');
    expect((await readLaneStatus(repo))?.paths).toBeNull();
    expect(await changedPaths(repo, base)).toEqual([
      '.gitignore',
      'a.txt',
      'b.txt',
      'new/file with space.txt',
    ]);
  });

  it('parses a detached HEAD and an unborn one', () => {
    const sha = 'a'.repeat(40);
    expect(parseLaneStatus(`# branch.oid ${sha}\0# branch.head (detached)\0`)).toMatchObject({
      head: sha,
      branch: null,
    });
    expect(parseLaneStatus('# branch.oid (initial)\0# branch.head main\0? x\0')).toMatchObject({
      head: null,
      branch: 'main',
      paths: ['x'],
    });
  });
});

describe('worktrees from git files', () => {
  it('lists what git worktree list lists, branches and detached heads', async () => {
    const repo = await makeRepo();
    const dir = tempDir();
    await git(repo, 'worktree', 'add', '-q', '-b', 'lane/one', join(dir, 'one'));
    await git(repo, 'worktree', 'add', '-q', '--detach', join(dir, 'two'));
    const fromGit = (await listWorktrees(repo)).map((w) => ({ path: w.path, branch: w.branch }));
    const fromFiles = worktreesFromFiles(join(repo, '.git'))!.map((w) => ({
      path: w.path,
      branch: w.branch,
    }));
    expect(fromFiles).toEqual(fromGit);
    expect(worktreesFromFiles(join(dir, 'not-a-git-dir'))).toBeNull();
  });

  it('skips a worktree half made or half removed beside it, and reads the rest', async () => {
    const repo = await makeRepo();
    const dir = tempDir();
    await git(repo, 'worktree', 'add', '-q', '-b', 'lane/one', join(dir, 'one'));
    await git(repo, 'worktree', 'add', '-q', '-b', 'lane/two', join(dir, 'two'));
    // `worktree add` has made the folder but not yet its files; `remove` has taken HEAD.
    mkdirSync(join(repo, '.git', 'worktrees', 'three'));
    rmSync(join(repo, '.git', 'worktrees', 'two', 'HEAD'));
    const listed = worktreesFromFiles(join(repo, '.git'));
    expect(listed?.map((w) => w.branch)).toEqual(['main', 'lane/one']);
    // A file git would not have written (a HEAD that names nothing) is not "in flux": git is asked.
    writeFileSync(join(repo, '.git', 'worktrees', 'two', 'HEAD'), 'garbage\n');
    expect(worktreesFromFiles(join(repo, '.git'))).toBeNull();
  });

  it('a lane whose worktree goes while its cleanliness is read is not there, not an error', async () => {
    const repo = await makeRepo();
    const lane = join(tempDir(), 'lane');
    await git(repo, 'worktree', 'add', '-q', '-b', 'lane/x', lane);
    const port = new RepoGit(repo, join(repo, '.git'));
    expect(await port.lookAtLane(lane, { clean: true })).toEqual({
      present: true,
      branch: 'lane/x',
      clean: true,
    });
    // Half removed as `git worktree remove` leaves it for a moment: the lane's git directory
    // gone, its folder and `.git` file still there (the listing was read before).
    port.refresh();
    const listedFirst = port.worktreesOnBranch('lane/x');
    await listedFirst;
    rmSync(join(repo, '.git', 'worktrees', 'lane'), { recursive: true });
    expect(await port.lookAtLane(lane, { clean: true })).toEqual({
      present: false,
      branch: null,
      clean: false,
    });
  });

  it('offer facts of a linked worktree match the step-by-step reading', async () => {
    const repo = await makeRepo();
    const dir = tempDir();
    const lane = join(dir, 'lane');
    await git(repo, 'worktree', 'add', '-q', '-b', 'lane/x', lane);
    const port = new RepoGit(repo, join(repo, '.git'));
    const head = (await git(repo, 'rev-parse', 'HEAD')).trim();
    expect(await port.offerFacts(lane)).toMatchObject({
      sameRepository: true,
      isWorktreeRoot: true,
      branch: 'lane/x',
      head,
      clean: true,
    });
    writeFileSync(join(lane, 'new.txt'), 'n\n');
    expect((await port.offerFacts(lane)).clean).toBe(false);
    const other = await makeRepo();
    expect((await new RepoGit(other, join(other, '.git')).offerFacts(lane)).sameRepository).toBe(false);
  });
});

describe('the process helper', () => {
  it('runs git off the main thread with its exit code, output and input', async () => {
    const helper = processHelper();
    expect(helper).not.toBeNull();
    const repo = await makeRepo();
    const ok = await helper!.run({ cwd: repo, argv: ['hash-object', '--stdin'], env: {}, input: 'x\n' });
    expect(ok.exitCode).toBe(0);
    expect(ok.stdout).toMatch(/^[0-9a-f]{40}\n$/);
    const bad = await helper!.run({ cwd: repo, argv: ['rev-parse', '--verify', 'nope'], env: {} });
    expect(bad.exitCode).toBe(128);
    expect(bad.stderr).toMatch(/nope|fatal/);
  });

  it('runs a check into its log with the tail, and a command that does not exist fails', async () => {
    const dir = tempDir();
    const log = join(dir, 'logs', 'check.log');
    const run = await runCheck(
      dir,
      { id: 'echo', run: 'echo out; echo err >&2; exit 3', timeout_ms: 10_000 },
      log,
    );
    expect(run.exit_code).toBe(3);
    expect(run.tail).toContain('out');
    expect(readFileSync(log, 'utf8')).toContain('err');
    const missing = await runCheck(dir, { id: 'none', run: ['/no/such/command'], timeout_ms: 10_000 }, null);
    expect(missing.exit_code).toBeNull();
    expect(missing.tail).toMatch(/ENOENT/);
  });
});
