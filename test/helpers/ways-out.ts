import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import type { ResultPromise } from 'execa';
import type { TestContext } from 'vitest';
import type { KernelRecord } from '../../src/core/records/kernel.js';
import type { BatchRecord } from '../../src/core/records/record.js';
import type { Report } from '../../src/core/records/report.js';
import { CLI, git, runCli, tempDir } from './repo.js';

// Shared by the tests of the ways out of a stopped batch (test/ways-out-cli.test.ts,
// test/rework-cli.test.ts): plans of script children, readers of the state files, a
// hand commit on the batch branch, the built CLI. Run `npm run -s build` first.

export interface ChildSpec {
  id: string;
  goal: string;
  blocked_by?: string[];
  scope: string[];
  acceptance: { id: string; run: string }[];
  run: string;
}

export function writePlan(batch: string, children: ChildSpec[], extra: Record<string, unknown> = {}): string {
  const path = join(tempDir('lanes-plan-'), `${batch}.plan.json`);
  const plan = { batch, executor: 'script', max_parallel: 2, ...extra, children };
  writeFileSync(path, `${JSON.stringify(plan, null, 2)}\n`);
  return path;
}

export const stateDir = (repo: string) => join(repo, '.git', 'lanes');

export function readRecord(repo: string, batch: string): BatchRecord | null {
  const file = join(stateDir(repo), 'batches', `${batch}.json`);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as BatchRecord) : null;
}

export function readReport(repo: string, batch: string): Report {
  return JSON.parse(readFileSync(join(stateDir(repo), 'batches', `${batch}.report.json`), 'utf8')) as Report;
}

export function kernelOf(repo: string, batch: string, task: string): KernelRecord {
  return JSON.parse(
    readFileSync(join(stateDir(repo), 'batches', batch, 'tasks', `${task}.json`), 'utf8'),
  ) as KernelRecord;
}

export function journal(
  repo: string,
  batch: string,
): { event: string; task?: string; [k: string]: unknown }[] {
  const file = join(stateDir(repo), 'batches', `${batch}.events.jsonl`);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { event: string });
}

export const child = (r: BatchRecord | null, id: string) => r!.children.find((c) => c.task_id === id)!;

/** `Lanes-Task` of every commit on the batch branch since its base: one per integration. */
export async function integratedTasks(repo: string, batch: string): Promise<string[]> {
  const base = readRecord(repo, batch)!.base_head;
  const out = await git(
    repo,
    'log',
    '--format=%(trailers:key=Lanes-Task,valueonly)',
    `${base}..batch/${batch}`,
  );
  return out
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .sort();
}

export async function fileAt(repo: string, ref: string, path: string): Promise<string> {
  return git(repo, 'show', `${ref}:${path}`);
}

/** A commit on `branch` made with plumbing only, as a user editing the batch branch by hand would. */
export async function handCommit(repo: string, branch: string, path: string, text: string): Promise<string> {
  const index = join(tempDir('lanes-index-'), 'index');
  const env = { GIT_INDEX_FILE: index, GIT_CONFIG_NOSYSTEM: '1' };
  const run = async (args: string[], input?: string) =>
    String(
      (await execa('git', args, { cwd: repo, env, ...(input !== undefined ? { input } : {}) })).stdout,
    ).trim();
  const parent = await run(['rev-parse', `refs/heads/${branch}`]);
  await run(['read-tree', parent]);
  const blob = await run(['hash-object', '-w', '--stdin'], text);
  await run(['update-index', '--add', '--cacheinfo', `100644,${blob},${path}`]);
  const tree = await run(['write-tree']);
  const commit = await run(['commit-tree', tree, '-p', parent, '-m', 'by hand']);
  await run(['update-ref', `refs/heads/${branch}`, commit, parent]);
  return commit;
}

export function spawnCli(test: TestContext, args: string[]): ResultPromise {
  const p = execa(process.execPath, [CLI, ...args], {
    env: { NO_COLOR: '1' },
    reject: false,
    stdin: 'ignore',
  });
  test.onTestFinished(() => {
    if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  });
  return p;
}

/** A shell fragment that waits (bounded, 60 s) until the test creates `gate`. */
export const waitFor = (gate: string) =>
  `for i in $(seq 1 1200); do [ -f '${gate}' ] && break; sleep 0.05; done; `;

export const lanes = (repo: string, ...args: string[]) => runCli(['-C', repo, ...args]);
