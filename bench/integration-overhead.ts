import { join } from 'node:path';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { execa } from 'execa';
import { CLI, independentPlan, makeRepo, tempDir, writeJson } from './fixtures.js';
import { ratioFigure, timeIt } from './stats.js';
import type { Figure } from './stats.js';

// 1. integration_overhead: a whole batch through lanes (headless, --parallel 4) against a
// bash script that does the same git work with plain git commands and the same parallelism.

// As lean as plain git gets: no subshell per lock, no rev-parse that git does itself, one
// process per git step (the locks are flock(1) on file descriptors the script holds).
const BASELINE = `#!/usr/bin/env bash
# One child: worktree at the current batch head, the child's file, a commit, then (one at a
# time, under flock) merge-tree + commit-tree + update-ref onto the batch branch, remove.
set -euo pipefail
repo=$1; lanes=$2; id=$3; i=$4
exec 8>"$lanes/.wt-lock" 9>"$lanes/.lock"
# git's worktree bookkeeping is not safe for concurrent adds/removes: one at a time, as
# lanes' steward does them.
flock 8
git -C "$repo" worktree add -q -b "lane/base/$id" "$lanes/$id" batch/base
flock -u 8
mkdir -p "$lanes/$id/files" && echo "$i" > "$lanes/$id/files/$id.txt"
git -C "$lanes/$id" add -A
git -C "$lanes/$id" commit -q -m "$id"
flock 9
tree=$(git -C "$repo" merge-tree --write-tree batch/base "lane/base/$id")
commit=$(git -C "$repo" commit-tree "$tree" -p batch/base -m "$id")
git -C "$repo" update-ref refs/heads/batch/base "$commit"
flock -u 9
flock 8
git -C "$repo" worktree remove "$lanes/$id"
git -C "$repo" branch -q -D "lane/base/$id"
flock -u 8
`;

/** A `git` first on PATH that logs each call, then runs the real one: counts git processes. */
async function countingPath(dir: string): Promise<{ env: Record<string, string>; count: () => number }> {
  const real = (await execa('sh', ['-c', 'command -v git'])).stdout.trim();
  const bin = join(dir, 'counting-git');
  const log = join(dir, 'git-calls.log');
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'git'), `#!/bin/sh\necho >> '${log}'\nexec '${real}' "$@"\n`, { mode: 0o755 });
  writeFileSync(log, '');
  return {
    env: { PATH: `${bin}:${process.env.PATH ?? ''}` },
    count: () => readFileSync(log, 'utf8').length,
  };
}

async function lanesRun(n: number, parallel: number, env: Record<string, string> = {}): Promise<number> {
  const dir = tempDir('lanes-bench-int-');
  const repo = await makeRepo(dir);
  const plan = writeJson(join(dir, 'plan.json'), independentPlan('bench', n, parallel));
  return timeIt(async () => {
    const r = await execa(process.execPath, [CLI, '-C', repo, 'start', plan, '--yes', '--headless'], {
      reject: false,
      env,
    });
    if (r.exitCode !== 0) throw new Error(`lanes batch failed (${r.exitCode}): ${r.stderr.slice(-500)}`);
  });
}

async function baselineRun(n: number, parallel: number, env: Record<string, string> = {}): Promise<number> {
  const dir = tempDir('lanes-bench-base-');
  const repo = await makeRepo(dir);
  const script = join(dir, 'child.sh');
  writeFileSync(script, BASELINE, { mode: 0o755 });
  const lanes = join(dir, 'lanes');
  await execa('mkdir', ['-p', lanes]);
  await execa('git', ['-C', repo, 'branch', 'batch/base']);
  const ids = Array.from({ length: n }, (_, i) => `c${String(i).padStart(4, '0')} ${i}`).join('\n');
  return timeIt(() =>
    execa('sh', ['-c', `printf '%s\\n' "$IDS" | xargs -P ${parallel} -L 1 ${script} ${repo} ${lanes}`], {
      env: { IDS: ids, ...env },
    }),
  );
}

export async function integrationOverhead(n: number, runs: number): Promise<Figure> {
  const lanes: number[] = [];
  const baseline: number[] = [];
  for (let i = 0; i < runs; i++) {
    baseline.push(await baselineRun(n, 4));
    lanes.push(await lanesRun(n, 4));
  }
  // Counted in runs of their own (the logging git costs a shell a call).
  const counting = await countingPath(tempDir('lanes-bench-count-'));
  await lanesRun(n, 4, counting.env);
  const lanesCalls = counting.count();
  const baseCounting = await countingPath(tempDir('lanes-bench-count-'));
  await baselineRun(n, 4, baseCounting.env);
  const baselineCalls = baseCounting.count();
  console.log(
    `git_processes_per_child: ${(lanesCalls / n).toFixed(1)} (${lanesCalls} for ${n} children; plain git ${(baselineCalls / n).toFixed(1)}) target 10: ${lanesCalls / n <= 10 ? 'met' : 'missed'}`,
  );
  return ratioFigure('integration_overhead', lanes, baseline, 1.2, {
    children: n,
    parallel: 4,
    git_processes: lanesCalls,
    git_processes_per_child: lanesCalls / n,
    baseline_git_processes: baselineCalls,
  });
}
