import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FinalRunner } from '../../src/coordinator/whole-batch/final-runner.js';
import { RepoGit } from '../../src/git/ports/repo-git.js';
import { git, makeRepo, tempDir } from '../helpers/repo.js';

// The FinalPort's check runs with real git and real processes: a scratch worktree of the
// commit, prepared like a lane (copy_files, then setup), the output kept in the logs, and
// the scratch worktree gone afterwards.

describe('FinalRunner.runChecks', () => {
  it('copies the configured files, runs setup, then the checks; logs kept, scratch removed', async () => {
    const repo = await makeRepo({ 'README.md': '# r\n', '.gitignore': '.env\n' });
    writeFileSync(join(repo, '.env'), 'SECRET=1\n');
    const commit = (await git(repo, 'rev-parse', 'HEAD')).trim();
    const scratch = tempDir('lanes-scratch-');
    const logs = join(tempDir('lanes-logs-'), 'final');
    const runner = new FinalRunner(
      new RepoGit(repo, join(repo, '.git')),
      { copy_files: ['.env'], setup: ['echo prepared > setup.out'] },
      scratch,
      logs,
    );
    const results = await runner.runChecks(
      commit,
      [
        { id: 'env', run: 'grep -q SECRET=1 .env && cat setup.out', timeout_ms: 10_000 },
        { id: 'red', run: ['false'], timeout_ms: 10_000 },
      ],
      '1-tip-x',
    );
    expect(results.map((r) => [r.id, r.exit_code])).toEqual([
      ['env', 0],
      ['red', 1],
    ]);
    expect(readFileSync(join(logs, '1-tip-x', 'env.log'), 'utf8')).toContain('prepared');
    expect(existsSync(join(logs, '1-tip-x', 'setup-1.log'))).toBe(true);
    expect((await git(repo, 'worktree', 'list')).split('\n').length).toBe(1);
  });

  it('a failing setup fails every check of the run', async () => {
    const repo = await makeRepo();
    const commit = (await git(repo, 'rev-parse', 'HEAD')).trim();
    const runner = new FinalRunner(
      new RepoGit(repo, join(repo, '.git')),
      { copy_files: [], setup: ['exit 3'] },
      tempDir('lanes-scratch-'),
      join(tempDir('lanes-logs-'), 'final'),
    );
    const results = await runner.runChecks(commit, [{ id: 'suite', run: ['true'], timeout_ms: 10_000 }], 'r');
    expect(results).toMatchObject([{ id: 'suite', exit_code: 3 }]);
  });
});
