import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import type { ResultPromise } from 'execa';
import { describe, expect, it } from 'vitest';
import type { TestContext } from 'vitest';
import type { KernelRecord } from '../../src/core/records/kernel.js';
import type { BatchRecord } from '../../src/core/records/record.js';
import type { Report } from '../../src/core/records/report.js';
import { SQRT_FIX } from '../../src/demo/demo-project.js';
import { CLI, git, makeRepo, runCli, tempDir } from '../helpers/repo.js';
import { until } from '../helpers/until.js';

// The coordinator loop end to end: the built CLI as a real process, real git in temporary
// repositories, headless executors that are real shell scripts. Nothing is mocked and
// nothing sleeps to synchronise: the tests poll files (the record, the journal) or wait
// for processes to exit. Run `npm run -s build` first.

interface Entry {
  ts: string;
  batch: string;
  event: string;
  task?: string;
  [field: string]: unknown;
}

interface ChildSpec {
  id: string;
  goal: string;
  blocked_by: string[];
  scope: string[];
  acceptance: { id: string; run: string }[];
  run: string;
}

interface PlanSpec {
  batch: string;
  executor: string;
  max_parallel?: number;
  children: ChildSpec[];
}

// ---- processes -------------------------------------------------------------------------

/** The CLI in the background (its own process group when detached), killed if the test ends first. */
function spawnCli(test: TestContext, args: string[], options: { detached?: boolean } = {}): ResultPromise {
  const p = execa(process.execPath, [CLI, ...args], {
    env: { NO_COLOR: '1' },
    reject: false,
    stdin: 'ignore',
    detached: options.detached ?? false,
  });
  // Only what this test started, by pid: a failed test must not leave a coordinator behind.
  test.onTestFinished(() => {
    if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  });
  return p;
}

// ---- state files -----------------------------------------------------------------------

function batchesDir(repo: string): string {
  return join(repo, '.git', 'lanes', 'batches');
}

function readRecord(repo: string, batch: string): BatchRecord | null {
  const path = join(batchesDir(repo), `${batch}.json`);
  if (!existsSync(path)) return null;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as BatchRecord;
  } catch {
    return null; // never torn (atomic rename), but be safe while polling
  }
}

function journalText(repo: string, batch: string): string {
  const path = join(batchesDir(repo), `${batch}.events.jsonl`);
  return existsSync(path) ? readFileSync(path, 'utf8') : '';
}

/** Whole lines only: a line still being written is not read. */
function journal(repo: string, batch: string): Entry[] {
  const text = journalText(repo, batch);
  return text
    .slice(0, text.lastIndexOf('\n') + 1)
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Entry);
}

/** Where the journal first has `event` for `task` (-1: nowhere). */
function at(entries: Entry[], event: string, task: string): number {
  return entries.findIndex((e) => e.event === event && e.task === task);
}

function count(entries: Entry[], event: string, task?: string): number {
  return entries.filter((e) => e.event === event && (task === undefined || e.task === task)).length;
}

async function worktreePaths(repo: string): Promise<string[]> {
  const out = await git(repo, 'worktree', 'list', '--porcelain');
  return out
    .split('\n')
    .filter((l) => l.startsWith('worktree '))
    .map((l) => l.slice('worktree '.length));
}

async function laneBranches(repo: string): Promise<string[]> {
  const out = await git(repo, 'branch', '--list', 'lane/*', '--format=%(refname:short)');
  return out.split('\n').filter((l) => l.trim() !== '');
}

// ---- plans -----------------------------------------------------------------------------

/** A child whose script executor writes its own file; its acceptance check is that file. */
function fileChild(id: string, sleep: string, blockedBy: string[] = [], extra = ''): ChildSpec {
  return {
    id,
    goal: `write f/${id}.txt`,
    blocked_by: blockedBy,
    scope: [`f/${id}.txt`],
    acceptance: [{ id: 'exists', run: `test -f f/${id}.txt` }],
    run: `${extra}sleep ${sleep}; mkdir -p f; echo ${id} > f/${id}.txt`,
  };
}

/** A shell fragment that waits (bounded, 60 s) until the test creates `gate`. */
function waitFor(gate: string): string {
  return `for i in $(seq 1 1200); do [ -f '${gate}' ] && break; sleep 0.05; done; `;
}

function writePlan(plan: PlanSpec): string {
  const path = join(tempDir('lanes-plan-'), `${plan.batch}.plan.json`);
  writeFileSync(path, `${JSON.stringify(plan, null, 2)}\n`);
  return path;
}

/**
 * `lanes start` (headless) of a one-child batch whose executor waits for the file `gate`,
 * returned once the batch runs: the caller looks at the running batch, then writes the gate.
 */
async function startGatedBatch(
  test: TestContext,
  batch: string,
  child: string,
): Promise<{ repo: string; gate: string; start: ResultPromise }> {
  const repo = await makeRepo();
  const gate = join(tempDir('lanes-gate-'), 'go');
  const planFile = writePlan({
    batch,
    executor: 'script',
    children: [fileChild(child, '0', [], waitFor(gate))],
  });
  const start = spawnCli(test, ['-C', repo, 'start', planFile, '--yes', '--headless']);
  await until(() => readRecord(repo, batch)?.batch_state === 'running', 'the batch to run', {
    timeoutMs: 150_000,
  });
  return { repo, gate, start };
}

function ids(prefix: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}${String(i + 1).padStart(2, '0')}`);
}

// ---- the journal as a timeline ---------------------------------------------------------

interface FlightFacts {
  maxInFlight: number;
  ticksChecked: number;
}

/**
 * Replays a batch journal and checks the parallelism contract of the coordinator loop.
 *
 * In flight, counted two ways, both at most `maxParallel` at every `lane-admitted`: from
 * `lane-admitted` to `slot-released` (what the loop journals after each report), and from
 * `lane-admitted` to the moment the child leaves flight inside a tick (`integrated` or
 * `parked`; `slot-released` follows after that tick's report). Every admitted child has
 * exactly one `slot-released`, always after it left flight.
 *
 * No idle slot: after every report of a running batch (a `tick` event) with `free` slots
 * and `waiting` children (every dependency integrated, not admitted), the loop has
 * min(free, waiting) of them in hand before the next tick ends: each has its lane requested
 * from the steward's jobs (`lane-requested`), by this report or an earlier one, and none is
 * requested that is not waiting. The jobs run beside the loop; each lane they offer
 * (`lane-provisioned`: a new lane, or one moved to the new head) is decided by the first
 * tick that begins after it (admitted, or refused for a base that moved once more): before
 * the second `tick` event after it at the latest, never after some later executor exit
 * only. Plan scopes are disjoint and the budget is the child count, so nothing else may
 * hold a startable child back.
 */
function checkFlight(entries: Entry[], plan: PlanSpec, maxParallel: number): FlightFacts {
  const deps = new Map(plan.children.map((c) => [c.id, c.blocked_by]));
  const admitted = new Set<string>();
  const left = new Set<string>();
  const integrated = new Set<string>();
  const slotReleased = new Map<string, number>();
  let holdingSlots = 0; // admitted and not slot-released yet
  let maxInFlight = 0;
  let ticksChecked = 0;
  const tickAt = entries.flatMap((e, i) => (e.event === 'tick' ? [i] : []));
  /** Where each child's lane was first requested. */
  const requestedBy = new Map<string, number>();
  for (const [i, e] of entries.entries())
    if (e.event === 'lane-requested' && !requestedBy.has(e.task!)) requestedBy.set(e.task!, i);

  for (const [i, e] of entries.entries()) {
    const task = e.task ?? '';
    if (e.event === 'lane-admitted') {
      expect(admitted.has(task), `${task} admitted twice`).toBe(false);
      admitted.add(task);
      holdingSlots++;
      expect(holdingSlots, `lanes holding a slot when ${task} was admitted (entry ${i})`).toBeLessThanOrEqual(
        maxParallel,
      );
      const inFlight = [...admitted].filter((t) => !left.has(t)).length;
      expect(inFlight, `lanes in flight when ${task} was admitted (entry ${i})`).toBeLessThanOrEqual(
        maxParallel,
      );
      maxInFlight = Math.max(maxInFlight, inFlight);
    }
    if (e.event === 'lane-refused')
      expect(e.reason, `lane-refused ${task} (entry ${i})`).toBe('batch_lane_base_mismatch');
    if (e.event === 'lane-requested') {
      const startable = !admitted.has(task) && deps.get(task)!.every((d) => integrated.has(d));
      expect(startable, `lane-requested ${task} (entry ${i}) for a child that cannot start`).toBe(true);
    }
    if (e.event === 'integrated') {
      integrated.add(task);
      left.add(task);
    }
    if (e.event === 'parked') left.add(task);
    if (e.event === 'slot-released') {
      expect(left.has(task), `slot-released ${task} before it left flight`).toBe(true);
      slotReleased.set(task, (slotReleased.get(task) ?? 0) + 1);
      holdingSlots--;
    }
    if (e.event !== 'tick' || e.batch_state !== 'running') continue;

    const next = tickAt.find((t) => t > i);
    if (next === undefined) continue;
    const inFlight = [...admitted].filter((t) => !left.has(t)).length;
    const free = maxParallel - inFlight;
    const waiting = plan.children
      .map((c) => c.id)
      .filter((id) => !admitted.has(id) && !left.has(id))
      .filter((id) => deps.get(id)!.every((d) => integrated.has(d)));
    const where = `after the tick at entry ${i} (${free} free, waiting: ${waiting.join(' ') || '-'})`;
    const inHand = waiting.filter((t) => (requestedBy.get(t) ?? Infinity) < next);
    expect(inHand.length, `lanes in hand by the next tick ${where}`).toBe(Math.min(free, waiting.length));
    ticksChecked++;
  }
  for (const [i, e] of entries.entries()) {
    if (e.event !== 'lane-provisioned') continue;
    const second = tickAt.filter((t) => t > i)[1] ?? entries.length;
    const decided = entries
      .slice(i + 1, second)
      .some((w) => (w.event === 'lane-admitted' || w.event === 'lane-refused') && w.task === e.task);
    // (what came after it, to tell a new lane's offer from a moved one's when it fails)
    const after = entries.slice(i + 1, second + 1).filter((w) => w.event === 'tick' || w.task === e.task);
    const told = `${JSON.stringify(e)}, then ${after.map((w) => w.event).join(' ')}`;
    expect(
      decided,
      `the offer of ${e.task} at entry ${i} was not decided by the tick after it: ${told}`,
    ).toBe(true);
  }
  for (const task of admitted) expect(slotReleased.get(task), `slot-released ${task}`).toBe(1);
  return { maxInFlight, ticksChecked };
}

// ---- the tests -------------------------------------------------------------------------

describe('lanes demo', () => {
  it('parks sqrt, lets div pass on rework, and completes after a human fix and an approved resume', async () => {
    const dir = tempDir('lanes-demo-');
    const repo = join(dir, 'calc');
    const demo = await runCli(['demo', '--headless', '--dir', dir], { env: { LANES_DEMO_DELAY_MS: '0' } });
    expect(demo.exitCode, demo.stderr).toBe(3);

    const status = await runCli(['-C', repo, 'status', 'demo', '--json']);
    expect(status.exitCode, status.stderr).toBe(0);
    const { record } = JSON.parse(status.stdout) as { record: BatchRecord; report: Report | null };
    expect(record.batch_state).toBe('needs_human');
    const parked = record.children.filter((c) => c.state === 'needs_human');
    expect(parked.map((c) => [c.task_id, c.reason])).toEqual([['sqrt', 'QA failure limit reached']]);
    for (const c of record.children.filter((c) => c.task_id !== 'sqrt'))
      expect(['integrated', 'released'], c.task_id).toContain(c.state);

    // div: one QA failure (its first attempt writes a wrong div), then a pass on rework.
    const div = JSON.parse(
      readFileSync(join(batchesDir(repo), 'demo', 'tasks', 'div.json'), 'utf8'),
    ) as KernelRecord;
    expect(div.qa_runs.map((r) => r.passed)).toEqual([false, true]);
    expect(record.children.find((c) => c.task_id === 'div')!.qa_failures).toBe(1);

    // What is on the batch branch passes its own tests (checked in a scratch worktree).
    const scratch = join(tempDir('lanes-scratch-'), 'check');
    await git(repo, 'worktree', 'add', '--detach', scratch, 'batch/demo');
    const tests = await execa(process.execPath, ['--test', 'test/'], { cwd: scratch, reject: false });
    expect(tests.exitCode, String(tests.stdout)).toBe(0);
    await git(repo, 'worktree', 'remove', '--force', scratch);

    // The human fixes sqrt in its parked lane and approves the resume.
    const lane = join(dir, 'calc.lanes', 'demo', 'sqrt');
    expect(record.children.find((c) => c.task_id === 'sqrt')!.lane?.path).toBe(lane);
    writeFileSync(join(lane, 'src', 'sqrt.mjs'), SQRT_FIX);
    const resume = await runCli(['-C', repo, 'resume', '--headless', '--approve']);
    expect(resume.exitCode, resume.stderr).toBe(0);
    expect(readRecord(repo, 'demo')!.batch_state).toBe('completed');
    expect((await git(repo, 'rev-list', '--count', 'main..batch/demo')).trim()).toBe('8');
    expect(await worktreePaths(repo)).toEqual([repo]);
  }, 300_000);
});

describe('lanes start: parallel lanes', () => {
  // 20 children, 4 slots, scripts of different lengths, and a few dependencies.
  const DEPS: Record<string, string[]> = {
    p05: ['p01'],
    p10: ['p02', 'p03'],
    p12: ['p11'],
    p15: ['p10'],
    p20: ['p05', 'p15'],
  };
  const plan: PlanSpec = {
    batch: 'par',
    executor: 'script',
    children: ids('p', 20).map((id, i) => fileChild(id, `0.0${(i * 7) % 10}`, DEPS[id] ?? [])),
  };

  it('never runs more than --parallel lanes, never leaves a slot idle while a child can start, and cleans up', async () => {
    const planFile = writePlan(plan);
    const repo = await makeRepo();
    const keepRepo = await makeRepo();
    writeFileSync(join(keepRepo, 'lanes.config.json'), '{"keep_lane_branches": true}\n');

    // Two independent batches at once (one per repository): the second keeps lane branches.
    const [run, keep] = await Promise.all(
      [repo, keepRepo].map((r) =>
        runCli(['-C', r, 'start', planFile, '--yes', '--headless', '--parallel', '4']),
      ),
    );
    expect(run!.exitCode, run!.stderr).toBe(0);
    expect(keep!.exitCode, keep!.stderr).toBe(0);

    for (const r of [repo, keepRepo]) {
      const record = readRecord(r, 'par')!;
      expect(record.batch_state).toBe('completed');
      expect(record.children.map((c) => c.state)).toEqual(Array(20).fill('released'));
      expect(record.commits).toHaveLength(20);
      expect(await worktreePaths(r)).toEqual([r]);

      const entries = journal(r, 'par');
      const facts = checkFlight(entries, plan, 4);
      expect(facts.maxInFlight).toBe(4);
      expect(facts.ticksChecked).toBeGreaterThan(3);
      for (const id of plan.children.map((c) => c.id)) expect(count(entries, 'released', id), id).toBe(1);
      expect(count(entries, 'executor-spawned')).toBe(20);
      // Lanes made ahead (DESIGN §7): each is made once and handed over at its child's turn.
      const ahead = entries.filter((e) => e.event === 'lane-made-ahead').map((e) => e.task!);
      expect(ahead.length).toBeGreaterThan(0);
      expect(new Set(ahead).size).toBe(ahead.length);
      for (const task of ahead) {
        // made before its turn, offered at it
        expect(at(entries, 'lane-made-ahead', task), task).toBeLessThan(at(entries, 'lane-requested', task));
        expect(at(entries, 'lane-requested', task), task).toBeLessThan(at(entries, 'lane-provisioned', task));
      }
      expect(count(entries, 'lane-discarded')).toBe(0);
    }
    expect(await laneBranches(repo)).toEqual([]);
    expect(await laneBranches(keepRepo)).toEqual(plan.children.map((c) => `lane/par/${c.id}`));
  }, 300_000);
});

describe('lanes resume after kill -9', () => {
  it('finishes the batch exactly as an uninterrupted run does', async (ctx) => {
    const plan: PlanSpec = {
      batch: 'x',
      executor: 'script',
      max_parallel: 3,
      children: ids('k', 10).map((id) => fileChild(id, '0.3')),
    };
    const planFile = writePlan(plan);
    const reference = await makeRepo();
    const repo = await makeRepo();
    const base = (await git(repo, 'rev-parse', 'HEAD')).trim();

    const referenceRun = runCli(['-C', reference, 'start', planFile, '--yes', '--headless']);
    const victim = spawnCli(ctx, ['-C', repo, 'start', planFile, '--yes', '--headless'], { detached: true });
    await until(() => count(journal(repo, 'x'), 'integrated') >= 3, '3 integrations', { timeoutMs: 150_000 });
    process.kill(victim.pid!, 'SIGKILL'); // the coordinator only: its executors live in their own groups
    const killed = await victim;
    expect(killed.signal).toBe('SIGKILL');
    const atKill = count(journal(repo, 'x'), 'integrated');
    expect(atKill).toBeGreaterThanOrEqual(3);
    expect(atKill).toBeLessThan(10);
    expect(readRecord(repo, 'x')!.batch_state).toBe('running');

    const resumed = await runCli(['-C', repo, 'resume', 'x', '--headless']);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    const ref = await referenceRun;
    expect(ref.exitCode, ref.stderr).toBe(0);

    for (const r of [reference, repo]) expect(readRecord(r, 'x')!.batch_state).toBe('completed');
    const tree = async (r: string) => (await git(r, 'rev-parse', 'batch/x^{tree}')).trim();
    expect(await tree(repo)).toBe(await tree(reference));
    expect((await git(repo, 'rev-list', '--count', `${base}..batch/x`)).trim()).toBe('10');
    const tasks = (
      await git(repo, 'log', '--format=%(trailers:key=Lanes-Task,valueonly)', `${base}..batch/x`)
    )
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '');
    expect(tasks.sort()).toEqual(plan.children.map((c) => c.id));
    expect(await worktreePaths(repo)).toEqual([repo]);

    // Every journal line is JSON, except perhaps one torn by the kill (then the last line
    // before the resume's lines: the resume appends whole lines after it).
    const lines = journalText(repo, 'x')
      .split('\n')
      .filter((l) => l !== '');
    const torn = lines.filter((l) => {
      try {
        JSON.parse(l);
        return false;
      } catch {
        return true;
      }
    });
    expect(torn.length).toBeLessThanOrEqual(1);
    const log = await runCli(['-C', repo, 'log', 'x', '--json']);
    expect(log.exitCode).toBe(0);
    expect((JSON.parse(log.stdout) as { unreadable: number }).unreadable).toBe(torn.length);
  }, 300_000);
});

describe('a slow check holds up only its own lane', () => {
  it('integrates a sibling that exits while the check runs, and starts the next lane meanwhile', async (ctx) => {
    const repo = await makeRepo();
    const dir = tempDir('lanes-slowqa-');
    const [checking, gate] = [join(dir, 'a-checking'), join(dir, 'gate')];
    // A's check waits for the gate; B exits only once A's check runs; C starts after either.
    const a = fileChild('a', '0');
    a.acceptance = [{ id: 'slow', run: `touch '${checking}'; ${waitFor(gate)}test -f f/a.txt` }];
    const planFile = writePlan({
      batch: 'slowqa',
      executor: 'script',
      max_parallel: 2,
      children: [a, fileChild('b', '0', [], waitFor(checking)), fileChild('c', '0')],
    });
    const start = spawnCli(ctx, ['-C', repo, 'start', planFile, '--yes', '--headless']);
    const integrated = (task: string) => count(journal(repo, 'slowqa'), 'integrated', task) > 0;
    // (bounded: with the checks inside the tick, B would wait for the gate, and so this would time out)
    const sibling = await until(
      () => integrated('b') && integrated('c'),
      'b and c integrated while a checks',
      {
        timeoutMs: 20_000,
      },
    ).catch(() => false);
    writeFileSync(gate, '');
    const r = await start;
    expect(r.exitCode, String(r.stderr)).toBe(0);
    expect(sibling).toBe(true);
    const entries = journal(repo, 'slowqa');
    expect(at(entries, 'integrated', 'b')).toBeLessThan(at(entries, 'qa-passed', 'a'));
    expect(at(entries, 'integrated', 'c')).toBeLessThan(at(entries, 'qa-passed', 'a'));
    expect(readRecord(repo, 'slowqa')!.batch_state).toBe('completed');
  }, 120_000);
});

describe('suspect dispatch', () => {
  it('pauses dispatch after two quick exits that changed nothing', async () => {
    const repo = await makeRepo();
    const planFile = writePlan({
      batch: 'idle',
      executor: 'script',
      max_parallel: 1,
      children: ['a', 'b', 'c'].map((id) => ({ ...fileChild(id, '0'), run: 'true' })),
    });
    const r = await runCli(['-C', repo, 'start', planFile, '--yes', '--headless']);
    expect(r.exitCode, r.stderr).toBe(3);
    expect(r.stderr).toContain('dispatch paused');
    const entries = journal(repo, 'idle');
    expect(count(entries, 'suspect-dispatch')).toBe(2);
    expect(count(entries, 'dispatch-paused')).toBe(1);
    expect(count(entries, 'executor-spawned')).toBeLessThan(3);
    // A lane made ahead for a child that did not get its turn is removed, branch and all.
    const handed = new Set(entries.filter((e) => e.event === 'lane-provisioned').map((e) => e.task));
    const unused = entries.filter((e) => e.event === 'lane-made-ahead' && !handed.has(e.task));
    expect(unused.length).toBeGreaterThan(0);
    const branchesLeft = await laneBranches(repo);
    for (const e of unused) {
      expect(count(entries, 'lane-discarded', e.task), e.task).toBe(1);
      expect(existsSync(e.path as string), e.path as string).toBe(false);
      expect(branchesLeft).not.toContain(`lane/idle/${e.task}`);
    }
  }, 120_000);
});

describe('lanes wait and lanes log', () => {
  it('wait returns once the batch completes; log prints the journal', async (ctx) => {
    const { repo, gate, start } = await startGatedBatch(ctx, 'w', 'a');

    const bad = await runCli(['-C', repo, 'wait', 'w', '--until', 'finished']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('unknown state "finished"');

    const wait = spawnCli(ctx, ['-C', repo, 'wait', 'w', '--until', 'completed']);
    writeFileSync(gate, '');
    const waited = await wait;
    expect(waited.exitCode, String(waited.stderr)).toBe(0);
    expect(String(waited.stdout).trim()).toBe('completed');
    expect(readRecord(repo, 'w')!.batch_state).toBe('completed');
    expect((await start).exitCode).toBe(0);

    const json = await runCli(['-C', repo, 'log', 'w', '--json']);
    expect(json.exitCode, json.stderr).toBe(0);
    const doc = JSON.parse(json.stdout) as { entries: Entry[]; unreadable: number };
    expect(doc.unreadable).toBe(0);
    expect(doc.entries).toEqual(journal(repo, 'w'));
    expect(doc.entries.map((e) => e.event)).toContain('batch-completed');

    const text = await runCli(['-C', repo, 'log', 'w']);
    expect(text.exitCode, text.stderr).toBe(0);
    const lines = text.stdout.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(doc.entries.length);
    for (const [i, e] of doc.entries.entries()) expect(lines[i]).toContain(` ${e.event}`);
  }, 120_000);
});

describe('one coordinator per batch', () => {
  it('refuses a second coordinator, naming the holder', async (ctx) => {
    const { repo, gate, start } = await startGatedBatch(ctx, 'held', 'slow');

    const second = await runCli(['-C', repo, 'resume', 'held', '--headless']);
    expect(second.exitCode).toBe(2);
    expect(second.stderr).toContain(`pid ${start.pid}`);

    writeFileSync(gate, '');
    const first = await start;
    expect(first.exitCode, String(first.stderr)).toBe(0);
    expect(readRecord(repo, 'held')!.batch_state).toBe('completed');
  }, 120_000);
});
