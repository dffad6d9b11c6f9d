import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, makeRepo, tempDir } from '../../helpers/repo.js';
import { lanesInProcess, readJournal, readRecord } from './support.js';

// Issue 24, item 5: a child whose scope holds a submodule moves it to a new commit. QA
// lists the submodule as changed; the delivery must carry the gitlink — a QA pass while the
// change is lost is the failure. The submodule is not checked out in the lane (a bump: the
// executor moves the gitlink and commits), where `git add` keeps the base's gitlink.

describe('a submodule change in scope', () => {
  it('is delivered: the batch branch records the submodule at its new commit', async () => {
    const sub = await makeRepo({ 'lib.txt': 'v1\n' });
    const repo = await makeRepo({ 'README.md': '# t\n' });
    await git(repo, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub, 'sub');
    await git(repo, 'commit', '-qm', 'add sub');
    // The submodule's next commit, which the child records (the submodule is not checked
    // out in the lane: the executor moves the gitlink and commits, as a bump does).
    writeFileSync(join(sub, 'lib.txt'), 'v2\n');
    await git(sub, 'commit', '-qam', 'v2');
    const next = (await git(sub, 'rev-parse', 'HEAD')).trim();
    const id = ['-c', 'user.email=t@x', '-c', 'user.name=t'].join(' ');
    const plan = {
      batch: 'sm',
      executor: 'script',
      children: [
        {
          id: 'S',
          goal: 'move the submodule',
          scope: ['sub'],
          acceptance: [{ id: 'ok', run: ['true'] }],
          run: `git update-index --cacheinfo 160000,${next},sub && git ${id} commit -qm bump`,
        },
      ],
    };
    const path = join(tempDir('lanes-plan-'), 'sm.plan.json');
    writeFileSync(path, JSON.stringify(plan));
    const r = await lanesInProcess(['-C', repo, 'start', path, '--yes', '--headless']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(readRecord(repo, 'sm')!.children[0]!.state).toBe('released');
    expect((await git(repo, 'ls-tree', 'batch/sm', 'sub')).split(/\s/).slice(0, 3)).toEqual([
      '160000',
      'commit',
      next,
    ]);
    expect(
      readJournal(repo, 'sm').entries.some((e) => e.event === 'qa-passed' && e.empty_delivery === true),
    ).toBe(false);
  }, 120_000);
});
