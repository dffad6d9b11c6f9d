import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { execa } from 'execa';
import { CLI, independentPlan, makeRepo, tempDir, writeJson } from './fixtures.js';
import { ratioFigure, timeIt } from './stats.js';
import type { Figure } from './stats.js';

// 1. integration_overhead: a whole batch through lanes (headless, --parallel 4) against a
// bash script that does the same git work with plain git commands and the same parallelism.

const BASELINE = `#!/usr/bin/env bash
# One child: worktree at the current batch head, the child's file, a commit, then (one at a
# time, under flock) merge-tree + commit-tree + update-ref onto the batch branch, remove.
set -euo pipefail
repo=$1; lanes=$2; id=$3; i=$4
# git's worktree bookkeeping is not safe for concurrent adds/removes: one at a time, as
# lanes' steward does them.
(
  flock 8
  base=$(git -C "$repo" rev-parse refs/heads/batch/base)
  git -C "$repo" worktree add -q -b "lane/base/$id" "$lanes/$id" "$base"
) 8>"$lanes/.wt-lock"
mkdir -p "$lanes/$id/files" && echo "$i" > "$lanes/$id/files/$id.txt"
git -C "$lanes/$id" add -A
git -C "$lanes/$id" commit -q -m "$id"
lane=$(git -C "$lanes/$id" rev-parse HEAD)
(
  flock 9
  head=$(git -C "$repo" rev-parse refs/heads/batch/base)
  tree=$(git -C "$repo" merge-tree --write-tree "$head" "$lane" | head -n 1)
  commit=$(git -C "$repo" commit-tree "$tree" -p "$head" -m "$id")
  git -C "$repo" update-ref refs/heads/batch/base "$commit" "$head"
) 9>"$lanes/.lock"
(
  flock 8
  git -C "$repo" worktree remove "$lanes/$id"
  git -C "$repo" branch -q -D "lane/base/$id"
) 8>"$lanes/.wt-lock"
`;

async function lanesRun(n: number, parallel: number): Promise<number> {
  const dir = tempDir('lanes-bench-int-');
  const repo = await makeRepo(dir);
  const plan = writeJson(join(dir, 'plan.json'), independentPlan('bench', n, parallel));
  return timeIt(async () => {
    const r = await execa(process.execPath, [CLI, '-C', repo, 'start', plan, '--yes', '--headless'], {
      reject: false,
    });
    if (r.exitCode !== 0) throw new Error(`lanes batch failed (${r.exitCode}): ${r.stderr.slice(-500)}`);
  });
}

async function baselineRun(n: number, parallel: number): Promise<number> {
  const dir = tempDir('lanes-bench-base-');
  const repo = await makeRepo(dir);
  const script = join(dir, 'child.sh');
  writeFileSync(script, BASELINE, { mode: 0o755 });
  const lanes = join(dir, 'lanes');
  await execa('mkdir', ['-p', lanes]);
  await execa('git', ['-C', repo, 'branch', 'batch/base']);
  const ids = Array.from({ length: n }, (_, i) => `c${String(i).padStart(4, '0')} ${i}`).join('\n');
  return timeIt(() =>
    execa(
      'sh',
      [
        '-c',
        `printf '%s\\n' "$IDS" | xargs -P ${parallel} -L 1 sh -c '"$0" "$1" "$2" "$3" "$4"' ${script} ${repo} ${lanes}`,
      ],
      {
        env: { IDS: ids },
      },
    ),
  );
}

export async function integrationOverhead(n: number, runs: number): Promise<Figure> {
  const lanes: number[] = [];
  const baseline: number[] = [];
  for (let i = 0; i < runs; i++) {
    baseline.push(await baselineRun(n, 4));
    lanes.push(await lanesRun(n, 4));
  }
  return ratioFigure('integration_overhead', lanes, baseline, 1.5, { children: n, parallel: 4 });
}
