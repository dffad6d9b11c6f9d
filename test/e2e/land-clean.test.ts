import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from '../helpers/repo.js';
import {
  branches,
  fileChild,
  lanesInProcess,
  leanRepo,
  readRecord,
  stateDir,
  worktreePaths,
  writePlan,
} from './reliability/support.js';

// `lanes land` and `lanes clean` with real git: a completed batch lands on the branch
// checked out in the user's worktree by fast-forward; a dirty worktree and a moved base
// (without --merge) are refused with nothing changed; --merge --push lands on a bare
// remote; clean leaves no lane branch or worktree, refuses to lose unintegrated work
// unless --force, and is harmless twice.

async function completedBatch(batch: string, base = 'main') {
  const repo = await leanRepo();
  const plan = writePlan({ batch, executor: 'script', children: [fileChild('A'), fileChild('B', ['A'])] });
  const text = JSON.parse(readFileSync(plan, 'utf8')) as Record<string, unknown>;
  writeFileSync(plan, JSON.stringify({ ...text, base }));
  const r = await lanesInProcess(['-C', repo, 'start', plan, '--yes', '--headless']);
  expect(r.exitCode, r.stderr).toBe(0);
  return repo;
}

const rev = async (repo: string, ref: string) => (await git(repo, 'rev-parse', ref)).trim();

describe('lanes land', () => {
  it('fast-forwards the checked-out base and its clean worktree', async () => {
    const repo = await completedBatch('ff');
    const r = await lanesInProcess(['-C', repo, 'land', 'ff']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain('fast-forward');
    expect(await rev(repo, 'main')).toBe(await rev(repo, 'batch/ff'));
    expect(readFileSync(join(repo, 'f/A.txt'), 'utf8')).toBe('A\n');
    expect(await git(repo, 'status', '--porcelain')).toBe('');
    const again = await lanesInProcess(['-C', repo, 'land', 'ff']);
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toContain('already on main');
  }, 120_000);

  it('refuses a dirty checked-out base and a moved base without --merge, changing nothing', async () => {
    const repo = await completedBatch('rf');
    const before = await rev(repo, 'main');
    const unreachable = await lanesInProcess(['-C', repo, 'land', 'rf', '--push', 'nosuchremote']);
    expect(unreachable.exitCode).toBe(2);
    expect(await rev(repo, 'main')).toBe(before);
    writeFileSync(join(repo, 'README.md'), 'local edit\n');
    const dirty = await lanesInProcess(['-C', repo, 'land', 'rf']);
    expect(dirty.exitCode).toBe(2);
    expect(dirty.stderr).toContain('has changes');
    expect(await rev(repo, 'main')).toBe(before);
    expect(readFileSync(join(repo, 'README.md'), 'utf8')).toBe('local edit\n');
    expect(existsSync(join(repo, 'f'))).toBe(false);

    await git(repo, 'commit', '-qam', 'moved on');
    const moved = await rev(repo, 'main');
    const refused = await lanesInProcess(['-C', repo, 'land', 'rf']);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('--merge');
    expect(await rev(repo, 'main')).toBe(moved);
    expect(await git(repo, 'status', '--porcelain')).toBe('');

    const itself = await lanesInProcess(['-C', repo, 'land', 'rf', '--into', 'batch/rf']);
    expect(itself.exitCode).toBe(2);
  }, 120_000);

  it('refuses when an untracked file of the user is in the way, changing nothing', async () => {
    const repo = await completedBatch('ut');
    const before = await rev(repo, 'main');
    mkdirSync(join(repo, 'f'));
    writeFileSync(join(repo, 'f/A.txt'), 'mine\n');
    const r = await lanesInProcess(['-C', repo, 'land', 'ut']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('f/A.txt');
    expect(await rev(repo, 'main')).toBe(before);
    expect(readFileSync(join(repo, 'f/A.txt'), 'utf8')).toBe('mine\n');
  }, 120_000);

  it('lands with --merge --push onto a bare remote, with a lease', async () => {
    const repo = await completedBatch('mp');
    const remote = join(tempDir('lanes-remote-'), 'remote.git');
    await execa('git', ['init', '-q', '--bare', remote]);
    await git(repo, 'remote', 'add', 'origin', remote);
    await git(repo, 'push', '-q', 'origin', 'main');
    await git(repo, 'commit', '-q', '--allow-empty', '-m', 'moved on');
    const moved = await rev(repo, 'main');
    const r = await lanesInProcess(['-C', repo, 'land', 'mp', '--merge', '--push', 'origin']);
    expect(r.exitCode, r.stderr).toBe(0);
    const main = await rev(repo, 'main');
    expect(await git(repo, 'rev-list', '--parents', '-1', 'main')).toBe(
      `${main} ${moved} ${await rev(repo, 'batch/mp')}`,
    );
    expect((await git(remote, 'rev-parse', 'main')).trim()).toBe(main);
    expect(readFileSync(join(repo, 'f/B.txt'), 'utf8')).toBe('B\n');
    expect(await git(repo, 'status', '--porcelain')).toBe('');

    // The remote moved meanwhile to something main does not have: the push is refused.
    const other = join(tempDir('lanes-other-'), 'other');
    await execa('git', ['clone', '-q', '-b', 'main', remote, other]);
    await git(
      other,
      '-c',
      'user.email=o@x',
      '-c',
      'user.name=o',
      'commit',
      '-q',
      '--allow-empty',
      '-m',
      'theirs',
    );
    await git(other, 'push', '-q', 'origin', 'main');
    const theirs = (await git(remote, 'rev-parse', 'main')).trim();
    const nowhere = await lanesInProcess(['-C', repo, 'land', 'mp', '--push', 'nosuchremote']);
    expect(nowhere.exitCode).toBe(2);
    expect(nowhere.stderr).toContain('cannot read nosuchremote');
    const stale = await lanesInProcess(['-C', repo, 'land', 'mp', '--push', 'origin']);
    expect(stale.exitCode).toBe(2);
    expect(stale.stderr).toContain('not pushed');
    expect((await git(remote, 'rev-parse', 'main')).trim()).toBe(theirs);
  }, 120_000);
});

describe('lanes clean', () => {
  it('leaves no lane branch or worktree, keeps the batch branch, and is idempotent', async () => {
    const repo = await completedBatch('cl');
    const before = await rev(repo, 'batch/cl');
    const r = await lanesInProcess(['-C', repo, 'clean', 'cl']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(await branches(repo, 'lane/cl/*')).toEqual([]);
    expect(await worktreePaths(repo)).toEqual([repo]);
    expect(await rev(repo, 'batch/cl')).toBe(before);
    expect(readRecord(repo, 'cl')).toBeNull();
    expect(existsSync(join(stateDir(repo), 'batches', 'cl'))).toBe(false);
    const status = await lanesInProcess(['-C', repo, 'status']);
    expect(status.stdout).not.toContain('cl');
    const twice = await lanesInProcess(['-C', repo, 'clean', 'cl']);
    expect(twice.exitCode).toBe(0);
    expect(twice.stdout).toContain('nothing to clean');
  }, 120_000);

  it('removes kept lane branches of integrated children without --force', async () => {
    const repo = await leanRepo({
      'README.md': '# t\n',
      'lanes.config.json': '{"keep_lane_branches": true}\n',
    });
    const plan = writePlan({ batch: 'kb', executor: 'script', children: [fileChild('A'), fileChild('B')] });
    expect((await lanesInProcess(['-C', repo, 'start', plan, '--yes', '--headless'])).exitCode).toBe(0);
    expect((await branches(repo, 'lane/kb/*')).sort()).toEqual(['lane/kb/A', 'lane/kb/B']);
    const r = await lanesInProcess(['-C', repo, 'clean', 'kb']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(await branches(repo, 'lane/kb/*')).toEqual([]);
    expect(await branches(repo, 'batch/kb')).toEqual(['batch/kb']);
  }, 120_000);

  it('removes a lane made ahead and never checked out (nothing in it), without --force', async () => {
    const repo = await completedBatch('cn');
    // (as a coordinator that stopped, or was killed, leaves a lane it made ahead)
    const lane = join(tempDir(), 'X');
    await git(repo, 'worktree', 'add', '-q', '--no-checkout', '-b', 'lane/cn/X', lane, 'batch/cn');
    const r = await lanesInProcess(['-C', repo, 'clean', 'cn']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(await branches(repo, 'lane/cn/*')).toEqual([]);
    expect(await worktreePaths(repo)).toEqual([repo]);
    expect(existsSync(lane)).toBe(false);
  }, 120_000);

  it('refuses while unintegrated work would be lost, naming it; --force trashes it and cleans', async () => {
    const repo = await leanRepo();
    const failing = { ...fileChild('P'), acceptance: [{ id: 'never', run: ['false'] }] };
    const planPath = writePlan({ batch: 'cu', executor: 'script', children: [fileChild('A'), failing] });
    const plan = JSON.parse(readFileSync(planPath, 'utf8')) as Record<string, unknown>;
    writeFileSync(planPath, JSON.stringify({ ...plan, budget: { qa_failure_limit: 1 } }));
    const r = await lanesInProcess(['-C', repo, 'start', planPath, '--yes', '--headless']);
    expect(r.exitCode, r.stderr).toBe(3);
    const lane = readRecord(repo, 'cu')!.children.find((c) => c.task_id === 'P')!.lane!.path;

    const refused = await lanesInProcess(['-C', repo, 'clean', 'cu']);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('P: changes in');
    expect(readRecord(repo, 'cu')).not.toBeNull();
    expect(existsSync(join(lane, 'f/P.txt'))).toBe(true);
    expect(await branches(repo, 'lane/cu/*')).toContain('lane/cu/P');

    const forced = await lanesInProcess(['-C', repo, 'clean', 'cu', '--force']);
    expect(forced.exitCode, forced.stderr).toBe(0);
    expect(await branches(repo, 'lane/cu/*')).toEqual([]);
    expect(await worktreePaths(repo)).toEqual([repo]);
    expect(readRecord(repo, 'cu')).toBeNull();
    const trashed = (await git(repo, 'for-each-ref', '--format=%(refname)', 'refs/lanes-trash/cu/')).trim();
    expect(trashed).toBe('refs/lanes-trash/cu/P');
  }, 120_000);
});

describe('bad arguments to land and clean', () => {
  it('exit 2 with a message naming what is wrong, and nothing written', async () => {
    const repo = await leanRepo();
    const cases: [string[], string][] = [
      [['land'], 'lanes land: no batch in this repository'],
      [['land', 'b1', '--into=-x'], '--into "-x" is not a valid name'],
      [['land', 'b1', '--into', 'a..b'], '--into "a..b" is not a valid name'],
      [['land', 'b1', '--push', 'a b'], '--push "a b" is not a valid name'],
      [['land', 'b1', '--bogus'], "Unknown option '--bogus'"],
      [['land', 'no/such'], 'is not a valid batch id'],
      [['land', 'nosuch'], 'no batch named "nosuch"'],
      [['clean'], 'lanes clean: no batch in this repository'],
      [['clean', 'b1', 'extra'], 'unexpected argument "extra"'],
      [['clean', 'b1', '--force=yes'], "--force' does not take an argument"],
    ];
    for (const [args, message] of cases) {
      const r = await lanesInProcess(['-C', repo, ...args]);
      expect(r.exitCode, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toContain(message);
      expect(r.stdout).toBe('');
    }
    expect(existsSync(stateDir(repo))).toBe(false);
  });
});

describe('clean while a coordinator holds the batch', () => {
  it('is refused (exit 2, naming the holder) and removes nothing', async () => {
    const repo = await completedBatch('held');
    const holder = execa(
      process.execPath,
      [join(import.meta.dirname, '..', 'fixtures', 'hold-lock.mjs'), stateDir(repo), 'held'],
      {
        stdin: 'pipe',
        reject: false,
        buffer: false,
      },
    );
    try {
      await new Promise<void>((resolve, reject) => {
        holder.stdout!.on('data', (chunk: Buffer) =>
          chunk.toString().includes('LOCKED') ? resolve() : undefined,
        );
        holder.on('exit', () => reject(new Error('the lock holder exited early')));
      });
      const r = await lanesInProcess(['-C', repo, 'clean', 'held']);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain('hold-lock held');
      expect(readRecord(repo, 'held')).not.toBeNull();
    } finally {
      holder.kill('SIGKILL');
    }
  }, 120_000);
});
