import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import type { KernelRecord } from '../../../src/core/records/kernel.js';
import { isSameProcessAlive } from '../../../src/process/process-info.js';
import { CLI, git, tempDir } from '../../helpers/repo.js';
import { until } from '../../helpers/until.js';
import { handCommit } from '../../helpers/ways-out.js';
import type { ChildSpec } from './support.js';
import {
  integratedTasks,
  lanesProcess,
  readRecord,
  stateDir,
  waitForGate,
  worktreePaths,
  writePlan,
} from './support.js';

// The scenarios of test/reliability/crash-ways-out.test.ts: each brings a fresh repository
// to a stop through the CLI, names the command that is the way out of it, and checks how a
// run of that command (crashed and repeated, or not) must leave the batch.

export interface Scenario {
  name: string;
  batch: string;
  /** Brings a fresh repository to the stop the command works on. */
  setup(repo: string): Promise<void>;
  command(repo: string): string[];
  /** The exit code of the command when it has done its work. */
  exit: number;
  /** What a cell must show once the command is done (problems, empty when sound). */
  check(repo: string): Promise<string[]>;
}

const lanes = (repo: string, ...args: string[]) => lanesProcess(['-C', repo, ...args]);

function laneOf(repo: string, batch: string, task: string): string {
  return readRecord(repo, batch)!.children.find((c) => c.task_id === task)!.lane!.path;
}

function stateOf(repo: string, batch: string, task: string): string {
  const c = readRecord(repo, batch)!.children.find((x) => x.task_id === task)!;
  return `${c.state}${c.reason ? `: ${c.reason}` : ''}`;
}

async function show(repo: string, ref: string, path: string): Promise<string> {
  return git(repo, 'show', `${ref}:${path}`).catch(() => '<missing>');
}

const trashOf = (repo: string, batch: string) => {
  const dir = join(stateDir(repo), 'trash', batch);
  return existsSync(dir) ? readdirSync(dir).sort() : [];
};

export const expectExit = (what: string, r: { exitCode: number; stderr: string }, code: number) => {
  if (r.exitCode !== code) throw new Error(`${what}: exit ${r.exitCode}, not ${code}: ${r.stderr}`);
};

// ---- the scenarios -----------------------------------------------------------------------

const rework: Scenario = {
  name: 'rework',
  batch: 'rw',
  async setup(repo) {
    const plan = writePlan({
      batch: 'rw',
      executor: 'script',
      children: [
        {
          id: 'A',
          goal: 'write A',
          scope: ['f.txt'],
          acceptance: [{ id: 'has-A', run: 'grep -qx A f.txt' }],
          run: "printf 'A\\n' > f.txt",
        } as ChildSpec,
      ],
    });
    expectExit('start --no-run', await lanes(repo, 'start', plan, '--yes', '--no-run'), 0);
    const path = join(tempDir('lanes-lanes-'), 'A');
    await git(repo, 'worktree', 'add', '-q', '-b', 'lane/rw/A', path, 'batch/rw');
    expectExit('tick --offer', await lanes(repo, 'tick', 'rw', '--offer', `A=${path}`), 0);
    writeFileSync(join(path, 'f.txt'), 'A\n');
    await handCommit(repo, 'batch/rw', 'f.txt', 'hand\n');
    expectExit('tick --exited', await lanes(repo, 'tick', 'rw', '--exited', 'A=0'), 0);
    // (the hand commit holds the batch until a fresh approval adopts it)
    expectExit('tick --approve', await lanes(repo, 'tick', 'rw', '--approve'), 0);
    const parked = stateOf(repo, 'rw', 'A');
    if (parked !== 'needs_human: batch_integration_conflict: f.txt') throw new Error(`setup: A is ${parked}`);
  },
  command: () => ['resume', 'rw', '--approve', '--headless'],
  exit: 3,
  async check(repo) {
    const problems: string[] = [];
    const head = (await git(repo, 'rev-parse', 'batch/rw')).trim();
    const a = stateOf(repo, 'rw', 'A');
    if (a !== 'needs_human: lane_conflict: f.txt') problems.push(`A is ${a}`);
    const merges = (await git(repo, 'rev-list', '--merges', 'lane/rw/A')).split('\n').filter(Boolean);
    if (merges.length !== 1) problems.push(`${merges.length} rework merges on lane/rw/A`);
    const lane = laneOf(repo, 'rw', 'A');
    if (!/^<<<<<<< /m.test(readFileSync(join(lane, 'f.txt'), 'utf8')))
      problems.push('no conflict markers in the lane');
    // The way on: the user resolves it in the lane; the batch completes with one integration.
    writeFileSync(join(lane, 'f.txt'), 'hand\nA\n');
    const done = await lanes(repo, 'resume', 'rw', '--approve', '--headless');
    if (done.exitCode !== 0)
      problems.push(`resume after the fix: exit ${done.exitCode}: ${done.stderr.trim()}`);
    if (readRecord(repo, 'rw')?.batch_state !== 'completed')
      problems.push(`batch ${readRecord(repo, 'rw')?.batch_state}`);
    if ((await show(repo, 'batch/rw', 'f.txt')) !== 'hand\nA')
      problems.push('batch f.txt is not the resolution');
    const tasks = await integratedTasks(repo, `${head}..batch/rw`);
    if (tasks.join() !== 'A') problems.push(`integrations since the head: ${tasks.join(',')}`);
    return problems;
  },
};

const drop: Scenario = {
  name: 'drop',
  batch: 'dp',
  async setup(repo) {
    const plan = writePlan({
      batch: 'dp',
      executor: 'script',
      max_parallel: 2,
      budget: { max_children: 2, qa_failure_limit: 1 },
      children: [
        {
          id: 'A',
          goal: 'never passes',
          scope: ['a.txt'],
          acceptance: [{ id: 'no', run: 'false' }],
          run: 'echo work of A > a.txt',
        },
        {
          id: 'B',
          goal: 'passes',
          scope: ['b.txt'],
          acceptance: [{ id: 'b', run: 'test -f b.txt' }],
          run: 'echo b > b.txt',
        },
      ],
    } as never);
    expectExit('start', await lanes(repo, 'start', plan, '--yes', '--headless'), 3);
  },
  command: () => ['drop', 'dp', 'A'],
  exit: 0,
  async check(repo) {
    const problems: string[] = [];
    const a = stateOf(repo, 'dp', 'A');
    if (a !== 'dropped: dropped by the user') problems.push(`A is ${a}`);
    if ((await show(repo, 'lane/dp/A', 'a.txt')) !== 'work of A')
      problems.push("A's work is not on lane/dp/A");
    if (trashOf(repo, 'dp').join() !== 'A') problems.push(`trash holds ${trashOf(repo, 'dp').join(',')}`);
    const done = await lanes(repo, 'resume', 'dp', '--approve', '--headless');
    if (done.exitCode !== 0) problems.push(`resume: exit ${done.exitCode}: ${done.stderr.trim()}`);
    if (readRecord(repo, 'dp')?.batch_state !== 'completed')
      problems.push(`batch ${readRecord(repo, 'dp')?.batch_state}`);
    const tasks = await integratedTasks(repo, `${readRecord(repo, 'dp')!.base_head}..batch/dp`);
    if (tasks.join() !== 'B') problems.push(`integrations: ${tasks.join(',')}`);
    const trees = await worktreePaths(repo);
    if (trees.length !== 2) problems.push(`worktrees: ${trees.join(', ')}`); // the repository and the trashed lane
    return problems;
  },
};

/** The executor pid the cancel scenario's setup left running (per repository). */
const sleepers = new Map<string, { pid: number; start: string | null }>();

const cancel: Scenario = {
  name: 'cancel',
  batch: 'cn',
  async setup(repo) {
    const gate = join(tempDir('lanes-gate-'), 'never');
    const plan = writePlan({
      batch: 'cn',
      executor: 'script',
      max_parallel: 2,
      children: [
        {
          id: 'A',
          goal: 'sleeps',
          scope: ['a.txt'],
          acceptance: [{ id: 'a', run: 'test -f a.txt' }],
          run: `echo half done > a.txt; ${waitForGate(gate)}`,
        },
        {
          id: 'B',
          goal: 'quick',
          scope: ['b.txt'],
          acceptance: [{ id: 'b', run: 'test -f b.txt' }],
          run: 'echo b > b.txt',
        },
      ],
    });
    const start = execa(process.execPath, [CLI, '-C', repo, 'start', plan, '--yes', '--headless'], {
      env: { NO_COLOR: '1' },
      reject: false,
      stdin: 'ignore',
    });
    await until(
      () => {
        const r = readRecord(repo, 'cn');
        const a = r?.children.find((c) => c.task_id === 'A');
        const b = r?.children.find((c) => c.task_id === 'B');
        return b?.state === 'released' && a?.lane && existsSync(join(a.lane.path, 'a.txt'));
      },
      'B released and A at work',
      { timeoutMs: 60_000 },
    );
    start.kill('SIGKILL'); // the coordinator dies; A's executor (its own process group) sleeps on
    await start;
    const k = JSON.parse(
      readFileSync(join(stateDir(repo), 'batches', 'cn', 'tasks', 'A.json'), 'utf8'),
    ) as KernelRecord;
    const open = k.attempts.at(-1)!;
    if (!open.pid || !isSameProcessAlive(open.pid, open.pid_start))
      throw new Error("setup: A's executor is not running");
    sleepers.set(repo, { pid: open.pid, start: open.pid_start });
  },
  command: () => ['cancel', 'cn'],
  exit: 0,
  async check(repo) {
    const problems: string[] = [];
    const record = readRecord(repo, 'cn');
    if (record?.batch_state !== 'cancelled') problems.push(`batch ${record?.batch_state}`);
    const a = stateOf(repo, 'cn', 'A');
    if (a !== 'dropped: batch cancelled') problems.push(`A is ${a}`);
    const b = stateOf(repo, 'cn', 'B');
    if (b !== 'released') problems.push(`B is ${b}`);
    const sleeper = sleepers.get(repo)!;
    if (isSameProcessAlive(sleeper.pid, sleeper.start)) problems.push("A's executor still runs");
    if ((await show(repo, 'lane/cn/A', 'a.txt')) !== 'half done')
      problems.push("A's work is not on lane/cn/A");
    if (trashOf(repo, 'cn').join() !== 'A') problems.push(`trash holds ${trashOf(repo, 'cn').join(',')}`);
    const report = JSON.parse(readFileSync(join(stateDir(repo), 'batches', 'cn.report.json'), 'utf8')) as {
      batch_state: string;
    };
    if (report.batch_state !== 'cancelled') problems.push(`report says ${report.batch_state}`);
    const tasks = await integratedTasks(repo, `${record!.base_head}..batch/cn`);
    if (tasks.join() !== 'B') problems.push(`integrations: ${tasks.join(',')}`);
    return problems;
  },
};

export const SCENARIOS = [rework, drop, cancel];
