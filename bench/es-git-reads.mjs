// Not part of `npm run bench`: a measurement behind docs/DECISIONS.md "Git speed", run by
// hand because es-git is not one of lanes' dependencies:
//   npm run build && npm install --no-save es-git@0.6.0 && node bench/es-git-reads.mjs
// The reads lanes makes on its hot path, through its long-lived `git cat-file
// --batch-command` (RepoSessions) and through libgit2 (es-git), on one 64-commit
// repository, alternating, 7 rounds of 300 calls each: the median µs a call.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openRepository } from 'es-git';
import { RepoSessions } from '../dist/src/git/runner/repo-sessions.js';

const repo = mkdtempSync(join(tmpdir(), 'lanes-esgit-'));
const git = (...args) => execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8' }).trim();
git('init', '-q', '-b', 'main');
git('config', 'user.email', 'bench@lanes.invalid');
git('config', 'user.name', 'bench');
for (let i = 0; i < 64; i++) {
  writeFileSync(join(repo, `f${i}.txt`), `${i}\n`);
  git('add', '-A');
  git('commit', '-q', '-m', `c${i}\n\nLanes-Batch: b\nLanes-Task: t${i}`);
}
const root = git('rev-list', '--max-parents=0', 'HEAD');
const tip = git('rev-parse', 'HEAD');
const shas = git('rev-list', 'HEAD').split('\n');
const objects = RepoSessions.of(repo).objects;
const libgit2 = await openRepository(repo);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
async function microsPerCall(n, fn) {
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await fn(i);
  return Number(process.hrtime.bigint() - start) / 1e3 / n;
}
let fresh = 0; // (a commit the session has not read yet: its first read is a round trip)
const cases = {
  'resolve refs/heads/main^{commit}': [
    () => objects.resolve('refs/heads/main^{commit}'),
    () => libgit2.revparseSingle('refs/heads/main^{commit}'),
  ],
  'read a commit, first time': [
    () => objects.commit(shas[fresh++ % shas.length]),
    (i) => libgit2.getCommit(shas[i % shas.length]).message(),
  ],
  'is the root an ancestor of the tip (64 commits)': [
    () => objects.reaches(root, tip),
    () => libgit2.getMergeBase(root, tip) === root,
  ],
};
for (const [name, [session, es]] of Object.entries(cases)) {
  const a = [];
  const b = [];
  for (let round = 0; round < 7; round++) {
    a.push(await microsPerCall(name.includes('first time') ? Math.ceil(64 / 7) : 300, session));
    b.push(await microsPerCall(300, async (i) => es(i)));
  }
  console.log(
    `${name}: cat-file session ${median(a).toFixed(1)} µs, es-git ${median(b).toFixed(1)} µs a call`,
  );
}
git('update-ref', 'refs/heads/main', root);
const seen = [
  (await objects.resolve('refs/heads/main^{commit}')) === root,
  libgit2.revparseSingle('refs/heads/main^{commit}') === root,
];
console.log(`a ref moved by another process, seen at the next read: session ${seen[0]}, es-git ${seen[1]}`);
rmSync(repo, { recursive: true, force: true });
process.exit(0);
