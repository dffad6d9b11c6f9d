import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import type { ResultPromise } from 'execa';
import type { TestContext } from 'vitest';
import type { BatchRecord } from '../../../src/core/records/record.js';
import { runCommand } from '../../../src/cli/run.js';
import { parseJournal } from '../../../src/store/journal.js';
import type { JournalRead } from '../../../src/store/journal.js';
import { CLI, git, makeRepo, tempDir } from '../../helpers/repo.js';

// Shared by the reliability tests (docs/RELIABILITY.md): the CLI in this process and as a
// real process, a batch that is cheap to run, and readers of what a run leaves behind.

export interface Outcome {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** `lanes <args>` in this process: what src/cli/main.ts does, minus process.exit. */
export async function lanesInProcess(args: string[], cwd = process.cwd()): Promise<Outcome> {
  let stdout = '';
  let stderr = '';
  const ctx = {
    stdout: (text: string) => void (stdout += text),
    stderr: (text: string) => void (stderr += text),
  };
  const exitCode = await runCommand(args, ctx, cwd);
  return { exitCode, stdout, stderr };
}

export interface ProcessOutcome extends Outcome {
  signal: string | null;
  ms: number;
}

/** The built CLI as a real process (run `npm run -s build` first). */
export async function lanesProcess(
  args: string[],
  env: Record<string, string> = {},
): Promise<ProcessOutcome> {
  const started = Date.now();
  const result = await execa(process.execPath, [CLI, ...args], {
    env: { NO_COLOR: '1', ...env },
    reject: false,
    stdin: 'ignore',
  });
  return {
    exitCode: result.exitCode ?? -1,
    signal: result.signal ?? null,
    stdout: String(result.stdout),
    stderr: String(result.stderr),
    ms: Date.now() - started,
  };
}

/** makeRepo without git's sample hooks: copied and snapshotted many times, so kept small. */
export async function leanRepo(files?: Record<string, string>): Promise<string> {
  const repo = await makeRepo(files);
  rmSync(join(repo, '.git', 'hooks'), { recursive: true, force: true });
  return repo;
}

/** The built CLI in the background; killed (by its pid) if the test ends first. */
export function spawnLanes(
  test: TestContext,
  args: string[],
  env: Record<string, string> = {},
): ResultPromise {
  const p = execa(process.execPath, [CLI, ...args], {
    env: { NO_COLOR: '1', ...env },
    reject: false,
    stdin: 'ignore',
  });
  test.onTestFinished(() => {
    if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  });
  return p;
}

/** A shell fragment that waits (at most 60 s) until `gate` exists. */
export function waitForGate(gate: string): string {
  return `for i in $(seq 1 1200); do [ -f '${gate}' ] && break; sleep 0.05; done; `;
}

/** The journal's events (whole lines only), as `event` or `event:task`. */
export function events(repo: string, batch: string): string[] {
  return readJournal(repo, batch).entries.map((e) => (e.task ? `${e.event}:${e.task}` : e.event));
}

/** A copy of a template repository in a folder of its own (lanes roots land beside it). */
export function copyRepo(template: string): string {
  const repo = join(tempDir('lanes-rel-'), 'repo');
  cpSync(template, repo, { recursive: true });
  return repo;
}

export interface ChildSpec {
  id: string;
  goal: string;
  blocked_by?: string[];
  scope: string[];
  acceptance: { id: string; run: string | string[] }[];
  run?: string;
  executor?: string;
}

export interface PlanSpec {
  batch: string;
  executor?: string;
  max_parallel?: number;
  children: ChildSpec[];
}

/** A child whose script writes one file (no sleep) and whose check is an argv (no shell). */
export function fileChild(id: string, blockedBy: string[] = [], prefix = ''): ChildSpec {
  return {
    id,
    goal: `write f/${id}.txt`,
    blocked_by: blockedBy,
    scope: [`f/${id}.txt`],
    acceptance: [{ id: 'exists', run: ['test', '-f', `f/${id}.txt`] }],
    run: `${prefix}mkdir -p f && echo ${id} > f/${id}.txt`,
  };
}

/**
 * Six children in three waves of two (max_parallel 2): c1 c2 | c3 (after c1) c4 (after c2) |
 * c5 (after c3, c4) c6 (after c3).
 */
export function sixChildPlan(batch: string): PlanSpec {
  return {
    batch,
    executor: 'script',
    max_parallel: 2,
    children: [
      fileChild('c1'),
      fileChild('c2'),
      fileChild('c3', ['c1']),
      fileChild('c4', ['c2']),
      fileChild('c5', ['c3', 'c4']),
      fileChild('c6', ['c3']),
    ],
  };
}

export function writePlan(plan: PlanSpec, dir = tempDir('lanes-plan-')): string {
  const path = join(dir, `${plan.batch}.plan.json`);
  writeFileSync(path, `${JSON.stringify(plan, null, 2)}\n`);
  return path;
}

export function stateDir(repo: string): string {
  return join(repo, '.git', 'lanes');
}

export function recordPath(repo: string, batch: string): string {
  return join(stateDir(repo), 'batches', `${batch}.json`);
}

export function readRecord(repo: string, batch: string): BatchRecord | null {
  const path = recordPath(repo, batch);
  if (!existsSync(path)) return null;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as BatchRecord;
  } catch {
    return null;
  }
}

export function readJournal(repo: string, batch: string): JournalRead {
  const path = join(stateDir(repo), 'batches', `${batch}.events.jsonl`);
  return parseJournal(existsSync(path) ? readFileSync(path, 'utf8') : '');
}

export async function worktreePaths(repo: string): Promise<string[]> {
  const out = await git(repo, 'worktree', 'list', '--porcelain');
  return out
    .split('\n')
    .filter((l) => l.startsWith('worktree '))
    .map((l) => l.slice('worktree '.length));
}

export async function branches(repo: string, pattern: string): Promise<string[]> {
  const out = await git(repo, 'branch', '--list', pattern, '--format=%(refname:short)');
  return out.split('\n').filter((l) => l.trim() !== '');
}

/** The Lanes-Task trailer of every commit on `range`, oldest first. */
export async function integratedTasks(repo: string, range: string): Promise<string[]> {
  const out = await git(repo, 'log', '--reverse', '--format=%(trailers:key=Lanes-Task,valueonly)', range);
  return out
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
}

/** Runs `work` over `items`, at most `limit` at a time; results in item order. */
export async function pool<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i] as T);
    }
  });
  await Promise.all(lanes);
  return results;
}
