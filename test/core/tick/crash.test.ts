import { existsSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { KernelRecord } from '../../../src/core/records/kernel.js';
import type { BatchRecord } from '../../../src/core/records/record.js';
import type { Report } from '../../../src/core/records/report.js';
import type { TickInput } from '../../../src/core/tick/tick.js';
import { BatchFiles } from '../../../src/store/batch-files.js';
import { startBatch, writeFiles } from '../../helpers/batch.js';
import type { Driver } from '../../helpers/batch.js';
import { git, makeRepo } from '../../helpers/repo.js';
import { findRepo } from '../../../src/store/state-dir.js';

// Crash safety of the core runner at the unit level, with real git. The crash point port
// throws the first time a named point is reached for the n-th time — right after a git
// mutation and before the state write that records it, as if the process stopped there.
// From the crash on, nothing the lost tick still had in hand reaches the disk (the store
// drops its writes, as a killed process writes nothing). The batch is then driven on by a
// "restarted" coordinator (ticks without the lost input) and must end exactly where an
// uncrashed run of the same plan ends.
// ('atomic-write-before-rename' is only reachable through LANES_CRASH_AT: not here.)

const POINTS = ['after-kernel-enroll', 'after-lane-commit', 'after-update-ref'] as const;
const CHILDREN = ['A', 'B', 'C'] as const;

const PLAN = `
batch: x
max_parallel: 2
children:
  - { id: A, goal: Write a, scope: ["a/**"], acceptance: [{ id: ok, run: "test -f a/out.txt" }] }
  - { id: B, goal: Write b, scope: ["b/**"], acceptance: [{ id: ok, run: "test -f b/out.txt" }] }
  - { id: C, goal: Write c, blocked_by: [A, B], scope: ["c/**"], acceptance: [{ id: ok, run: "test -f c/out.txt" }] }
`;

class SimulatedCrash extends Error {
  override readonly name = 'SimulatedCrash';
}

/** A crashPoint port: counts every point reached, throws once at the n-th `point`. */
function crashPort(point: string | null, nth: number) {
  const seen = new Map<string, number>();
  /** `down`: crashed and not restarted yet (the store writes nothing). */
  const state = { fired: false, down: false, seen };
  const crashPoint = (name: string) => {
    const count = (seen.get(name) ?? 0) + 1;
    seen.set(name, count);
    if (name === point && count === nth && !state.fired) {
      state.fired = true;
      state.down = true;
      throw new SimulatedCrash(`crash at ${name}:${count}`);
    }
  };
  return { crashPoint, state };
}

/** The executor of every child: the same bytes at the same path, every run. */
function execute(d: Driver, task: string): void {
  writeFiles(d.lanePath(task), { [`${task.toLowerCase()}/out.txt`]: `output of ${task}\n` });
}

interface Run {
  repoDir: string;
  driver: Driver;
  report: Report;
  crashes: number;
  seen: Map<string, number>;
  /** How many run ids the runner asked for (one per enrollment, none adopted twice). */
  runIds: number;
  /** The branch tips right after the crash. */
  refsAtCrash: Map<string, string> | null;
}

async function branchTips(repoDir: string): Promise<Map<string, string>> {
  const out = await git(repoDir, 'for-each-ref', '--format=%(refname:short) %(objectname)', 'refs/heads/');
  return new Map(out.split('\n').map((line) => line.split(' ') as [string, string]));
}

/** Plays steward and executor until the batch is completed (or gives up after 30 ticks). */
async function runBatch(point: string | null, nth: number): Promise<Run> {
  const repoDir = await makeRepo({ 'README.md': '# test\n', 'docs/guide.md': 'guide\n' });
  const port = crashPort(point, nth);
  let runIds = 0;
  const newRunId = () => `run-${++runIds}`;
  const { stateDir } = await findRepo(repoDir);
  const writes = new Set<string>([
    'writeRecord',
    'writeKernel',
    'writeReport',
    'flushReport',
    'writePlan',
    'journal',
  ] satisfies (keyof BatchFiles)[]);
  const store = new Proxy(new BatchFiles(stateDir, 'x'), {
    get(target, key) {
      if (port.state.down && typeof key === 'string' && writes.has(key)) return () => {};
      const value = Reflect.get(target, key) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const driver = await startBatch(repoDir, PLAN, {
    portsPatch: { crashPoint: port.crashPoint, newRunId, store },
  });
  let crashes = 0;
  let refsAtCrash: Map<string, string> | null = null;
  const step = async (input: TickInput): Promise<Report> => {
    try {
      return await driver.tick(input);
    } catch (error) {
      if (!(error instanceof SimulatedCrash)) throw error;
      crashes++;
      port.state.down = false; // (restarted)
      refsAtCrash = await branchTips(repoDir);
      // The restarted coordinator knows nothing of the lost tick's input.
      return driver.tick();
    }
  };
  let report = await step({});
  for (let i = 0; i < 30 && report.batch_state === 'running'; i++) {
    for (const h of report.handoffs)
      if (h.action === 'release' && existsSync(h.lane_path)) await driver.release(h.task_id);
    const provisions = report.handoffs.filter((h) => h.action === 'provision');
    const implement = report.handoffs.filter(
      (h) => h.action === 'executor' && h.next_obligation === 'implement',
    );
    if (provisions.length > 0) {
      const offers = [];
      for (const h of provisions) {
        // A lane made before a crash is offered again as it is.
        if (!existsSync(driver.lanePath(h.task_id))) await driver.provision(h.task_id, h.base_head);
        offers.push({ task_id: h.task_id, path: driver.lanePath(h.task_id) });
      }
      report = await step({ offers });
    } else if (implement.length > 0) {
      for (const h of implement) execute(driver, h.task_id);
      report = await step({ exited: implement.map((h) => ({ task_id: h.task_id, code: 0, signal: null })) });
    } else {
      report = await step({});
    }
  }
  expect(port.state.fired).toBe(point !== null);
  return { repoDir, driver, report, crashes, seen: port.state.seen, runIds, refsAtCrash };
}

async function rev(repoDir: string, ...args: string[]): Promise<string> {
  return (await git(repoDir, 'rev-list', ...args)).trim();
}

function readRecord(run: Run): BatchRecord {
  return run.driver.ports().store.readRecord();
}

function readKernel(run: Run, task: string): KernelRecord {
  const read = run.driver.ports().store.readKernel(task);
  if (read.kind !== 'ok') throw new Error(`kernel of ${task}: ${read.kind}`);
  return read.record;
}

/** What must be the same after any crash: the outcome, as git and the record show it. */
async function outcome(run: Run) {
  const record = readRecord(run);
  const branch = `batch/${record.batch_id}`;
  return {
    batch_state: record.batch_state,
    integrations: Number(await rev(run.repoDir, '--count', `${record.base_head}..${branch}`)),
    tree: (await git(run.repoDir, 'rev-parse', `${branch}^{tree}`)).trim(),
    children: record.children.map((c) => [c.task_id, c.state]),
  };
}

/** What must hold in every run: one delivery per lane, one integration per child, a sound journal. */
async function checkSound(run: Run): Promise<void> {
  const record = readRecord(run);
  const branch = `batch/${record.batch_id}`;
  expect(new Set(record.commits).size).toBe(record.commits.length);
  expect((await rev(run.repoDir, '--reverse', `${record.base_head}..${branch}`)).split('\n')).toEqual(
    record.commits,
  );

  for (const task of CHILDREN) {
    const c = record.children.find((x) => x.task_id === task)!;
    const lane = c.lane!;
    // Exactly one commit over the lane base: the delivery, never a second one.
    expect(Number(await rev(run.repoDir, '--count', `${lane.base_head}..${lane.branch}`))).toBe(1);
    expect((await git(run.repoDir, 'rev-parse', lane.branch)).trim()).toBe(lane.lane_commit);
    // One run per lane: the kernel's run id is the one the record and the commit carry.
    const kernel = readKernel(run, task);
    expect(kernel.run_id).toBe(lane.run_id);
    const trailers = await git(run.repoDir, 'log', '-1', '--format=%(trailers:only,unfold)', c.commit!);
    expect(trailers).toContain(`Lanes-Task: ${task}`);
    expect(trailers).toContain(`Lanes-Run: ${lane.run_id}`);
    expect(trailers).toContain(`Lanes-Lane-Commit: ${lane.lane_commit}`);
  }

  const journal = (run.driver.ports().store as BatchFiles).journalFile.read();
  expect(journal.unreadable).toBe(0);
  for (const event of ['enrolled', 'lane-committed', 'integrated'])
    for (const task of CHILDREN)
      expect(
        journal.entries.filter((e) => e.event === event && e.task === task),
        `${event} ${task}`,
      ).toHaveLength(1);
  const integrated = journal.entries.filter((e) => e.event === 'integrated').map((e) => e.commit);
  expect([...integrated].sort()).toEqual([...record.commits].sort());
  expect(journal.entries.filter((e) => e.event === 'batch-completed')).toHaveLength(1);

  // One run id per child: an enrollment interrupted by a crash adopted its kernel's run.
  expect(run.runIds).toBe(CHILDREN.length);

  // What git held at the crash is what the record ends with: a delivery or an integration
  // made before the crash was adopted, never made a second time.
  if (run.refsAtCrash) {
    for (const c of record.children) {
      const tip = run.refsAtCrash.get(c.lane!.branch);
      if (tip !== undefined && tip !== c.lane!.base_head)
        expect(tip, `${c.task_id} lane tip`).toBe(c.lane!.lane_commit);
    }
    const batchTip = run.refsAtCrash.get(branch)!;
    expect(
      batchTip === record.base_head || record.commits.includes(batchTip),
      'batch tip at the crash is recorded',
    ).toBe(true);
  }

  // The coordinator's own worktree was never touched.
  expect(await git(run.repoDir, 'status', '--porcelain', '--untracked-files=all')).toBe('');
  expect((await git(run.repoDir, 'symbolic-ref', '--short', 'HEAD')).trim()).toBe('main');
}

describe('crash at every crash point of the tick', () => {
  let reference: Run;
  let expected: Awaited<ReturnType<typeof outcome>>;

  beforeAll(async () => {
    reference = await runBatch(null, 0);
    expected = await outcome(reference);
  }, 60_000);

  it('the uncrashed reference run completes and reaches every point once per child', async () => {
    expect(reference.report.batch_state).toBe('completed');
    expect(reference.crashes).toBe(0);
    expect(expected).toMatchObject({ batch_state: 'completed', integrations: 3 });
    for (const point of POINTS) expect(reference.seen.get(point), point).toBe(CHILDREN.length);
    await checkSound(reference);
  });

  const cases = POINTS.flatMap((point) => [1, 2, 3].map((nth) => ({ point, nth })));
  it.for(cases)('$point, occurrence $nth', async ({ point, nth }) => {
    expect(reference.seen.get(point) ?? 0).toBeGreaterThanOrEqual(nth);
    const run = await runBatch(point, nth);
    expect(run.crashes).toBe(1);
    expect(run.report.batch_state).toBe('completed');
    expect(await outcome(run)).toStrictEqual(expected);
    await checkSound(run);
    // The step after the crash point found git's work instead of redoing it.
    const journal = (run.driver.ports().store as BatchFiles).journalFile.read().entries;
    // (every integration of the crashed step was unrecorded: each is adopted, none made again)
    if (point === 'after-update-ref')
      expect(
        journal.filter((e) => e.event === 'integrated' && e.adopted === true).length,
      ).toBeGreaterThanOrEqual(1);
    if (point === 'after-lane-commit') {
      const record = readRecord(run);
      const crashedLane = record.children.filter(
        (c) => run.refsAtCrash!.get(c.lane!.branch) === c.lane!.lane_commit,
      );
      expect(crashedLane.length).toBeGreaterThanOrEqual(1);
    }
  });
});
