import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { execa } from 'execa';
import { RepoGit } from '../../src/git/ports/repo-git.js';
import { makeRepo, tempDir } from '../fixtures.js';
import { median } from '../stats.js';

// What the simulation's ports in memory leave out of the writer's service time: the git
// work of one integration (the merge, the integration commit, the compare-and-swap of the
// batch branch), measured with the real adapter (src/git/ports/repo-git.ts) in a temporary
// repository. The median of `n` integrations, each of a lane commit of its own file onto
// a head that moved since the lane's base, as in a batch.

export async function gitMsPerIntegration(n: number): Promise<number> {
  const repo = await makeRepo(tempDir('lanes-bench-sim-git-'));
  const run = (...args: string[]) => execa('git', ['-C', repo, ...args]);
  const base = (await run('rev-parse', 'HEAD')).stdout.trim();
  await run('branch', 'batch/sim', base);
  const lanes: string[] = [];
  for (let i = 0; i < n; i++) {
    await run('checkout', '-q', '-B', `lane/sim/c${i}`, base);
    writeFileSync(join(repo, `c${i}.txt`), `${i}\n`);
    await run('add', `c${i}.txt`);
    await run('commit', '-q', '-m', `c${i}`);
    lanes.push((await run('rev-parse', 'HEAD')).stdout.trim());
  }
  await run('checkout', '-q', 'main');
  const git = new RepoGit(repo, join(repo, '.git'));
  const times: number[] = [];
  let head = base;
  for (const lane of lanes) {
    const t0 = performance.now();
    const merged = await git.mergeTree(head, lane);
    if (!('tree' in merged)) throw new Error(`git-cost: a conflict merging ${lane}`);
    const next = await git.integrationCommit(merged.tree, head, lane, 'Lanes-Lane-Commit: x');
    if (!(await git.advanceBranch('batch/sim', next, head))) throw new Error('git-cost: the branch moved');
    times.push(performance.now() - t0);
    head = next;
  }
  return median(times.slice(1)); // (the first starts the adapter's long-lived git processes)
}
