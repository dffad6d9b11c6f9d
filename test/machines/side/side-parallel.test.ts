import { realpathSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { laneBranch } from '../../../src/core/basics/ids.js';
import { machineLanePath, machineRepoPath, repoId } from '../../../src/machines/protocol.js';
import { git, makeRepo } from '../../helpers/repo.js';
import { machine } from './side.js';

// The link runs ops of several lanes at once, each a process of its own on the machine, and
// git does not lock its list of worktrees: adds and removes side by side must all succeed.

describe('the side script: ops of several lanes at once', () => {
  it('adds and removes sixteen lanes side by side, three times over, without a failure', async () => {
    const origin = await makeRepo();
    const m = machine(repoId(realpathSync(origin)));
    await m.call('wt.list', {});
    const base = await git(origin, 'rev-parse', 'HEAD');
    await git(origin, 'push', '-q', machineRepoPath(m.root, m.repo), `HEAD:refs/lanes/in/${base}`);
    const children = [...'abcdefghijklmnop'];
    const lane = (child: string) => machineLanePath(m.root, 'm1', m.repo, 'par', child);
    for (const round of [1, 2, 3]) {
      const added = await Promise.all(
        children.map((child) =>
          m.call('wt.add', {
            path: lane(child),
            branch: laneBranch('par', child),
            base,
            branchExists: round > 1,
          }),
        ),
      );
      expect(added).toEqual(children.map(() => null));
      expect(await m.call('wt.list', {})).toHaveLength(children.length);
      const removed = await Promise.all(children.map((child) => m.call('wt.remove', { path: lane(child) })));
      expect(removed).toEqual(children.map(() => null));
    }
    expect(await m.call('wt.list', {})).toEqual([]);
  }, 120_000);
});
