import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterProbe, maxProbes, nextStep, startBisect } from '../src/core/whole-batch/bisect.js';
import { FinalRunner } from '../src/coordinator/whole-batch/final-runner.js';
import type { FinalVerification } from '../src/core/records/final-state.js';
import { planRebuild } from '../src/core/whole-batch/final-verification.js';
import type { Plan } from '../src/core/plan/plan.js';
import type { TickPorts } from '../src/core/ports/tick-ports.js';
import { RECORD_CONTRACT } from '../src/core/records/record.js';
import type { BatchRecord } from '../src/core/records/record.js';
import { TickContext } from '../src/core/steps/tick-context.js';
import { RepoGit } from '../src/git/ports/repo-git.js';
import { makeRepo, tempDir } from './fixtures.js';
import { median, ratioFigure, round, timeIt } from './stats.js';
import type { Figure } from './stats.js';

// 7. The whole batch's final verification, on a real batch branch of 64 integration
// commits (each child adds its own file; child k's file makes the final check red):
//   final_bisect_runs: final-check runs (the tip, then the bisection) until the culprit is
//     known, with the real FinalRunner (a scratch worktree per run); target ≤ 8.
//   rebuild_64: rebuilding the branch without the first child (63 commits re-integrated
//     by final-verification.ts's planRebuild with merge-tree + commit-tree, then one
//     compare-and-swap update-ref) against plain git doing the same: `git rebase --onto`
//     in a fresh worktree.

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

/** The batch record of the bench branch: 64 children integrated in order (nothing is written). */
function recordOf(batch: Batch): BatchRecord {
  const at = '2026-12-01T00:00:00.000Z';
  return {
    contract: RECORD_CONTRACT,
    batch_id: 'bench',
    plan_digest: '0'.repeat(64),
    base_head: batch.base,
    branch: 'batch/bench',
    confirmation_time: at,
    budget: { max_children: N, qa_failure_limit: 3 },
    max_parallel: 4,
    batch_state: 'running',
    children: batch.lanes.map((lane, i) => ({
      task_id: `c${i + 1}`,
      blocked_by: [],
      state: 'released' as const,
      reason: null,
      commit: batch.commits[i]!,
      lane: {
        path: `/nonexistent/c${i + 1}`,
        branch: `lane/bench/c${i + 1}`,
        base_head: lane.base,
        lane_commit: lane.commit,
        run_id: 'run',
      },
      qa_failures: 0,
    })),
    commits: batch.commits,
    adopted_heads: [],
    created_at: at,
    updated_at: at,
  };
}

/** lanes' rebuild without c1, through final-verification.ts's own planRebuild, then the CAS. */
async function lanesRebuild(batch: Batch): Promise<void> {
  const git = new RepoGit(batch.repo, join(batch.repo, '.git'));
  const final = new FinalRunner(git, { copy_files: [], setup: [] }, tempDir('lanes-bench-x-'), '/dev/null');
  const record = recordOf(batch);
  const ports = {
    git,
    final,
    clock: { now: () => new Date() },
    crashPoint: () => {},
  } as unknown as TickPorts;
  const ctx = new TickContext(ports, record, { children: [] } as unknown as Plan);
  const fv: FinalVerification = {
    phase: 'bisect',
    tip: batch.commits[N - 1]!,
    commits: batch.commits,
    failing: ['bench'],
    good: 0,
    bad: 1,
    runs: 7,
    rebuild: null,
  };
  const rebuild = await planRebuild(ctx, final, fv, 'c1', 1);
  if (rebuild.commits.length !== N - 1) throw new Error(`rebuilt ${rebuild.commits.length} commits`);
  if (!(await git.advanceBranch('batch/bench', rebuild.to, rebuild.from))) throw new Error('the CAS failed');
  await gitOut(batch.repo, ['update-ref', 'refs/heads/batch/bench', rebuild.from]); // back, for the next run
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
