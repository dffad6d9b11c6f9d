import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterProbe, maxProbes, nextStep, startBisect } from '../src/core/bisect.js';
import { FinalRunner } from '../src/coordinator/final-runner.js';
import { RepoGit } from '../src/git/repo-git.js';
import { makeRepo, tempDir } from './fixtures.js';
import { median, ratioFigure, round, timeIt } from './stats.js';
import type { Figure } from './stats.js';

// 7. The whole batch's final verification, on a real batch branch of 64 integration
// commits (each child adds its own file; child k's file makes the final check red):
//   final_bisect_runs: final-check runs (the tip, then the bisection) until the culprit is
//     known, with the real FinalRunner (a scratch worktree per run); target ≤ 8.
//   rebuild_64: rebuilding the branch without the first child (63 commits re-integrated
//     with merge-tree + commit-tree, then one compare-and-swap update-ref) against plain
//     git doing the same: `git rebase --onto` in a fresh worktree.

const N = 64;

async function gitOut(cwd: string, args: string[], input?: string): Promise<string> {
  return (await execa('git', args, { cwd, ...(input === undefined ? {} : { input }) })).stdout.trim();
}

interface Batch {
  repo: string;
  base: string;
  lanes: { base: string; commit: string }[];
  commits: string[];
}

/** 64 lanes off the base, each adding f/c<i>.txt, integrated one after another. */
async function batchBranch(): Promise<Batch> {
  const repo = await makeRepo(tempDir('lanes-bench-final-'));
  const base = await gitOut(repo, ['rev-parse', 'HEAD']);
  const git = new RepoGit(repo, join(repo, '.git'));
  const index = join(tempDir('lanes-bench-index-'), 'index');
  const lanes: Batch['lanes'] = [];
  const commits: string[] = [];
  let head = base;
  for (let i = 1; i <= N; i++) {
    const env = { GIT_INDEX_FILE: index };
    const blob = await gitOut(repo, ['hash-object', '-w', '--stdin'], `c${i}\n`);
    await execa('git', ['read-tree', base], { cwd: repo, env });
    await execa('git', ['update-index', '--add', '--cacheinfo', `100644,${blob},f/c${i}.txt`], {
      cwd: repo,
      env,
    });
    const tree = (await execa('git', ['write-tree'], { cwd: repo, env })).stdout.trim();
    const lane = await gitOut(repo, ['commit-tree', tree, '-p', base, '-m', `lanes(c${i}): add c${i}`]);
    const merged = await git.mergeTree(head, lane);
    if ('conflicts' in merged) throw new Error('conflict building the bench batch');
    head = await git.integrationCommit(merged.tree, head, lane, `Lanes-Lane-Commit: ${lane}\n`);
    lanes.push({ base, commit: lane });
    commits.push(head);
  }
  await gitOut(repo, ['update-ref', 'refs/heads/batch/bench', head]);
  return { repo, base, lanes, commits };
}

/** The tip run plus the bisection, with real final-check runs; returns the number of runs. */
async function bisectRuns(batch: Batch, runner: FinalRunner, culprit: number): Promise<number> {
  const checks = [{ id: 'no-culprit', run: `! test -f f/c${culprit}.txt`, timeout_ms: 60_000 }];
  const red = async (commit: string, label: string) =>
    (await runner.runChecks(commit, checks, label)).some((r) => r.exit_code !== 0);
  let runs = 1;
  if (!(await red(batch.commits[N - 1]!, `tip-${culprit}`))) throw new Error('the tip should be red');
  let state = startBisect(N);
  for (;;) {
    const step = nextStep(state);
    if (step.kind === 'found') {
      if (step.culprit !== culprit) throw new Error(`found ${step.culprit}, not ${culprit}`);
      return runs;
    }
    runs++;
    const passed = !(await red(batch.commits[step.prefix - 1]!, `probe-${culprit}-${step.prefix}`));
    state = afterProbe(state, step.prefix, passed);
  }
}

/** The worst case over every culprit position, from the state machine alone. */
function worstCaseRuns(): number {
  return 1 + maxProbes(N);
}

export async function finalBisectRuns(positions: number[]): Promise<Figure> {
  const batch = await batchBranch();
  const scratch = tempDir('lanes-bench-scratch-');
  const runner = new FinalRunner(
    new RepoGit(batch.repo, join(batch.repo, '.git')),
    { copy_files: [], setup: [] },
    scratch,
    join(scratch, 'logs'),
  );
  const runs: number[] = [];
  const ms: number[] = [];
  for (const culprit of positions) {
    let n = 0;
    ms.push(await timeIt(async () => (n = await bisectRuns(batch, runner, culprit))));
    runs.push(n);
  }
  const value = Math.max(...runs);
  return {
    name: 'final_bisect_runs',
    value,
    min: Math.min(...runs),
    max: value,
    target: 8,
    unit: 'runs',
    met: value <= 8,
    detail: {
      commits: N,
      culprits: positions,
      runs,
      worst_case_any_position: worstCaseRuns(),
      ms_to_culprit: ms.map(round),
      median_ms_to_culprit: round(median(ms)),
    },
  };
}

/** lanes' rebuild: each later lane commit replayed onto the new head, then one CAS. */
async function lanesRebuild(batch: Batch): Promise<void> {
  const git = new RepoGit(batch.repo, join(batch.repo, '.git'));
  const runner = new FinalRunner(git, { copy_files: [], setup: [] }, tempDir('lanes-bench-x-'), '/dev/null');
  let head = batch.base;
  // As final-verification.ts does: the messages read at once, a direct merge-tree for a
  // lane whose base is on the rebuilt chain (here: every lane, based on the base).
  await runner.prepareReplay(batch.lanes.slice(1).map((l) => l.commit));
  for (const lane of batch.lanes.slice(1)) {
    const merged =
      lane.base === batch.base
        ? await git.mergeTree(head, lane.commit)
        : await runner.replayTree(head, lane.base, lane.commit);
    if ('conflicts' in merged) throw new Error('conflict in the rebuild');
    head = await git.integrationCommit(merged.tree, head, lane.commit, `Lanes-Lane-Commit: ${lane.commit}\n`);
  }
  const tip = batch.commits[N - 1]!;
  if (!(await git.advanceBranch('batch/bench', head, tip))) throw new Error('the CAS failed');
  await gitOut(batch.repo, ['update-ref', 'refs/heads/batch/bench', tip]); // back, for the next run
}

/** Plain git: a worktree at the tip, `git rebase --onto <base> <first commit>`, the worktree removed. */
async function plainRebuild(batch: Batch, dir: string): Promise<void> {
  const wt = join(dir, 'wt');
  await gitOut(batch.repo, ['worktree', 'add', '-q', '--detach', wt, batch.commits[N - 1]!]);
  await gitOut(wt, ['rebase', '-q', '--onto', batch.base, batch.commits[0]!]);
  await gitOut(batch.repo, ['worktree', 'remove', '--force', wt]);
  rmSync(wt, { recursive: true, force: true });
}

export async function rebuild64(runs: number): Promise<Figure> {
  const batch = await batchBranch();
  const dir = tempDir('lanes-bench-rebase-');
  mkdirSync(dir, { recursive: true });
  const lanes: number[] = [];
  const baseline: number[] = [];
  for (let i = 0; i < runs; i++) {
    baseline.push(await timeIt(() => plainRebuild(batch, dir)));
    lanes.push(await timeIt(() => lanesRebuild(batch)));
  }
  return ratioFigure('rebuild_64', lanes, baseline, 1.5, { commits: N, replayed: N - 1 });
}
