// A lane checked out by lanes (src/git/worktree/lane-checkout.ts) against `git reset --hard`
// of the same unpopulated lane: wall time a lane, for lanes of 61 files, alternating rounds.
// Run after `npm run build`: node bench/lane-checkout.mjs [lanes a round] [rounds]
// (docs/DECISIONS.md "Integration overhead, fourth step").
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { performance } from 'node:perf_hooks';
import { checkoutLane } from '../dist/src/git/worktree/lane-checkout.js';
import { RepoSessions } from '../dist/src/git/runner/repo-sessions.js';
import { git } from '../dist/src/git/runner/git.js';

const perRound = Number(process.argv[2] ?? 20);
const rounds = Number(process.argv[3] ?? 5);
const dir = mkdtempSync(join(tmpdir(), 'lanes-checkout-bench-'));
const g = (cwd, ...args) => execFileSync('git', ['-C', cwd, ...args], { encoding: 'utf8' });
const repo = join(dir, 'repo');
mkdirSync(join(repo, 'files'), { recursive: true });
g(repo, 'init', '-q', '-b', 'main');
g(repo, 'config', 'user.email', 'bench@lanes.invalid');
g(repo, 'config', 'user.name', 'bench');
writeFileSync(join(repo, 'README.md'), '# bench\n');
for (let i = 0; i < 60; i++) writeFileSync(join(repo, 'files', `c${i}.txt`), `${i}\n`);
g(repo, 'add', '-A');
g(repo, 'commit', '-q', '-m', 'files');
const head = g(repo, 'rev-parse', 'HEAD').trim();
const sessions = RepoSessions.of(repo);
let made = 0;

async function round(by) {
  const lanes = [];
  for (let i = 0; i < perRound; i++) {
    const id = `l${++made}`;
    g(repo, 'branch', `lane/${id}`, head);
    g(repo, 'worktree', 'add', '-q', '--no-checkout', join(dir, id), `lane/${id}`);
    lanes.push(join(dir, id));
  }
  const start = performance.now();
  for (const lane of lanes) {
    if (by === 'git') await git(lane, ['reset', '--hard', '--quiet', head]);
    else if ((await checkoutLane(sessions, join(repo, '.git'), lane, head)) !== true)
      throw new Error('not checked out by lanes');
  }
  return (performance.now() - start) / perRound;
}

const times = { lanes: [], git: [] };
await round('lanes'); // (the worker's start and the settings read: not a lane's cost)
for (let r = 0; r < rounds; r++) for (const by of ['git', 'lanes']) times[by].push(await round(by));
const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
for (const by of ['git', 'lanes'])
  console.log(
    `${by.padEnd(6)} ${median(times[by]).toFixed(2)} ms a lane (${times[by].map((t) => t.toFixed(2)).join(' ')})`,
  );
RepoSessions.closeAll();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
