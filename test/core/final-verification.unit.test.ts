import { describe, expect, it } from 'vitest';
import { afterProbe, maxProbes, nextStep, startBisect } from '../../src/core/whole-batch/bisect.js';
import { applyEviction } from '../../src/core/whole-batch/eviction.js';
import { verifyBatch } from '../../src/core/whole-batch/final-verification.js';
import type { CheckRun, KernelRecord } from '../../src/core/records/kernel.js';
import { newKernelRecord } from '../../src/core/records/kernel.js';
import { classifyLineage } from '../../src/core/steps/lineage.js';
import { parsePlanText } from '../../src/core/plan/plan.js';
import type { Plan } from '../../src/core/plan/plan.js';
import type { FinalPort } from '../../src/core/ports/final-port.js';
import type { GitPort } from '../../src/core/ports/git-port.js';
import type { KernelRead, StorePort } from '../../src/core/ports/store-port.js';
import type { TickPorts } from '../../src/core/ports/tick-ports.js';
import type { BatchRecord, ChildRecord } from '../../src/core/records/record.js';
import { checkRecordInvariants } from '../../src/core/records/record.js';
import { TickContext } from '../../src/core/steps/tick-context.js';
import { preparedRecord, SHA } from '../helpers/records.js';

// The final verification's decisions without git or processes: the bisection state
// machine, the eviction of the record, and the tick step over in-memory ports that model
// a batch branch as sets of children (a commit's checks fail when it holds the culprit).

describe('bisect', () => {
  it('finds every culprit position of 1..64 commits in at most ceil(log2 N) probes', () => {
    for (let n = 1; n <= 64; n++) {
      for (let culprit = 1; culprit <= n; culprit++) {
        let state = startBisect(n);
        let probes = 0;
        for (;;) {
          const step = nextStep(state);
          if (step.kind === 'found') {
            expect(step.culprit).toBe(culprit);
            break;
          }
          probes++;
          state = afterProbe(state, step.prefix, step.prefix < culprit);
        }
        expect(probes).toBeLessThanOrEqual(maxProbes(n));
      }
    }
    expect(maxProbes(64)).toBe(6);
    expect(maxProbes(8)).toBe(3);
  });

  it('refuses a probe outside the open interval and a batch without commits', () => {
    expect(() => afterProbe({ good: 2, bad: 4 }, 4, true)).toThrow(RangeError);
    expect(() => afterProbe({ good: 2, bad: 4 }, 2, true)).toThrow(RangeError);
    expect(() => startBisect(0)).toThrow(RangeError);
  });
});

// ---- in-memory ports -------------------------------------------------------------------

const IDS = ['c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8'];

function plan(withFinalChecks = true): Plan {
  return parsePlanText(
    JSON.stringify({
      batch: 'b1',
      children: IDS.map((id) => ({
        id,
        goal: `do ${id}`,
        blocked_by: id === 'c5' ? ['c3'] : [],
        scope: [`f/${id}`],
        acceptance: [{ id: 'own', run: ['true'] }],
      })),
      ...(withFinalChecks ? { final_checks: [{ id: 'whole', run: ['true'] }] } : {}),
    }),
    'plan.json',
  );
}

class Crash extends Error {}

interface World {
  ports: TickPorts;
  store: {
    record: BatchRecord;
    kernels: Map<string, KernelRecord>;
    journal: { event: string; [k: string]: unknown }[];
  };
  tip: { value: string };
  runs: string[];
  lanes: { restored: string[]; retired: string[] };
  refs: Map<string, string>;
  journal: () => World['store']['journal'];
}

/** All eight children integrated in order; c`bad` breaks the final check. */
function world(bad: string | string[], crashAt?: { point: string; nth: number }, conflictOn?: string): World {
  const contents = new Map<string, Set<string>>([[SHA(1), new Set()]]);
  let record: BatchRecord = {
    ...preparedRecord('b1', Object.fromEntries(IDS.map((id) => [id, id === 'c5' ? ['c3'] : []]))),
    batch_state: 'running',
  };
  let head = SHA(1);
  const children: ChildRecord[] = [];
  IDS.forEach((id, i) => {
    const commit = SHA(100 + i);
    contents.set(commit, new Set([...contents.get(head)!, id]));
    children.push({
      ...record.children[i]!,
      state: i % 2 ? 'released' : 'integrated',
      commit,
      lane: {
        path: `/lanes/${id}`,
        branch: `lane/b1/${id}`,
        base_head: head,
        lane_commit: SHA(200 + i),
        run_id: `run-${id}`,
      },
    });
    head = commit;
  });
  record = { ...record, children, commits: children.map((c) => c.commit!) };
  const laneTask = new Map(IDS.map((id, i) => [SHA(200 + i), id]));
  const tip = { value: head };
  const kernels = new Map<string, KernelRecord>(
    IDS.map((id) => [
      id,
      {
        ...newKernelRecord({
          batchId: 'b1',
          taskId: id,
          runId: `run-${id}`,
          lanePath: `/lanes/${id}`,
          baseHead: SHA(1),
          reviewRequired: false,
          now: 'x',
        }),
        lifecycle: 'done' as const,
        next_obligation: 'none' as const,
      },
    ]),
  );
  const journal: World['store']['journal'] = [];
  const state = { record, kernels, journal };
  const runs: string[] = [];
  const lanes = { restored: [] as string[], retired: [] as string[] };
  const refs = new Map<string, string>();
  let made = 0;
  const seen = new Map<string, number>();
  const store: Partial<StorePort> = {
    readRecord: () => state.record,
    writeRecord: (r) => {
      expect(checkRecordInvariants(r)).toEqual([]);
      state.record = r;
    },
    journal: (event, fields = {}) => void journal.push({ event, ...fields }),
    readKernel: (id): KernelRead => {
      const k = kernels.get(id);
      return k ? { kind: 'ok', record: k } : { kind: 'missing' };
    },
    writeKernel: (k) => void kernels.set(k.task_id, k),
  };
  const git: Partial<GitPort> = {
    branchTip: async () => tip.value,
    advanceBranch: async (_b, next, expected) => {
      if (tip.value !== expected) return false;
      tip.value = next;
      return true;
    },
    integrationCommit: async (tree) => {
      const [, parent, laneCommit] = tree.split(':');
      const sha = SHA(500 + made++);
      contents.set(sha, new Set([...contents.get(parent!)!, laneTask.get(laneCommit!)!]));
      return sha;
    },
  };
  const final: FinalPort = {
    runChecks: async (commit, checks): Promise<CheckRun[]> => {
      runs.push(commit);
      const red = [bad].flat().some((b) => contents.get(commit)!.has(b));
      return checks.map((c) => ({
        id: c.id,
        exit_code: red ? 1 : 0,
        timed_out: false,
        duration_ms: 1,
        log_path: null,
        tail: '',
      }));
    },
    replayTree: async (h, _base, laneCommit) =>
      laneTask.get(laneCommit) === conflictOn
        ? { conflicts: ['f/shared'] }
        : { tree: `tree:${h}:${laneCommit}` },
    keepRef: async (ref, commit) => void refs.set(ref, commit),
    dropRef: async (ref) => void refs.delete(ref),
    restoreLane: async (lane) => void lanes.restored.push(lane.path),
    retireLane: async (lane) => void lanes.retired.push(lane.path),
  };
  const ports = {
    store: store as StorePort,
    git: git as GitPort,
    qa: { runChecks: async () => [] },
    clock: { now: () => new Date('2026-12-01T10:00:00.000Z') },
    newRunId: () => 'run-new',
    integrationChecks: 'changed',
    final,
    crashPoint: (point: string) => {
      const n = (seen.get(point) ?? 0) + 1;
      seen.set(point, n);
      if (crashAt && crashAt.point === point && crashAt.nth === n) throw new Crash(point);
    },
  } as TickPorts;
  return { ports, store: state, tip, runs, lanes, refs, journal: () => journal };
}

async function runStep(w: World): Promise<void> {
  await verifyBatch(new TickContext(w.ports, w.store.record, plan()));
}

describe('verifyBatch', () => {
  it("uses the config's final checks when the plan has none, and none at all leaves the batch alone", async () => {
    const w = world('c2');
    const ports = { ...w.ports, finalChecks: [{ id: 'config-suite', run: ['true'], timeout_ms: 1000 }] };
    await verifyBatch(new TickContext(ports, w.store.record, plan(false)));
    expect(w.store.record.children.find((c) => c.task_id === 'c2')!.reason).toMatch(
      /^final_check_failed: config-suite/,
    );
    const idle = world('c2');
    await verifyBatch(new TickContext(idle.ports, idle.store.record, plan(false)));
    expect(idle.runs).toEqual([]);
    expect(idle.store.record.batch_state).toBe('running');
  });

  it('green tip: completed after one run', async () => {
    const w = world('none');
    await runStep(w);
    expect(w.runs.length).toBe(1);
    expect(w.store.record.batch_state).toBe('completed');
    expect(w.store.record.final_verification).toBeUndefined();
  });

  for (const bad of IDS) {
    it(`red tip, culprit ${bad}: at most 1 + 3 + 1 runs; culprit parked, dependents skipped, branch green`, async () => {
      const w = world(bad);
      await runStep(w);
      expect(w.runs.length).toBeLessThanOrEqual(5);
      const r = w.store.record;
      const child = (id: string) => r.children.find((c) => c.task_id === id)!;
      expect(child(bad).state).toBe('needs_human');
      expect(child(bad).reason).toMatch(/^final_check_failed: whole/);
      expect(child(bad).lane?.lane_commit).toBeNull();
      if (bad === 'c3') expect(child('c5').state).toBe('skipped_blocked');
      expect(r.commits.at(-1) ?? r.base_head).toBe(w.tip.value);
      expect(
        w
          .journal()
          .filter((e) => e.event === 'final-check')
          .at(-1)?.passed ?? true,
      ).toBe(true);
      expect(w.lanes.restored).toEqual([`/lanes/${bad}`]);
      expect(w.refs.size).toBe(0);
      expect(w.store.kernels.get(bad)).toMatchObject({ lifecycle: 'active', next_obligation: 'run_qa' });
      expect(r.final_verification).toBeUndefined();
    });
  }

  it('a crash after a probe ran and before it was recorded resumes at that probe', async () => {
    const w = world('c3', { point: 'after-final-check', nth: 2 });
    await expect(runStep(w)).rejects.toThrow(Crash);
    expect(w.store.record.final_verification).toMatchObject({ phase: 'bisect', good: 0, bad: 8, runs: 1 });
    await runStep(w);
    expect(w.runs.filter((c) => c === SHA(107)).length).toBe(1); // the tip ran once
    expect(w.runs.length).toBeLessThanOrEqual(6);
    expect(w.store.record.children.find((c) => c.task_id === 'c3')!.state).toBe('needs_human');
  });

  it('a crash after the rebuilt branch moved resumes the eviction, not the bisection', async () => {
    const w = world('c3', { point: 'after-rebuild-update-ref', nth: 1 });
    await expect(runStep(w)).rejects.toThrow(Crash);
    const fv = w.store.record.final_verification!;
    expect(fv.phase).toBe('evict');
    expect(w.tip.value).toBe(fv.rebuild!.to);
    expect(w.refs.get('refs/lanes/b1/pre-rebuild')).toBe(fv.rebuild!.from);
    const before = w.runs.length;
    await runStep(w);
    expect(w.runs.length).toBe(before + 1); // only the rebuilt tip
    expect(w.store.record.commits.at(-1)).toBe(w.tip.value);
  });
});

describe('a later child that no longer merges without the culprit', () => {
  it('is parked with the conflict and its lane back; the rest is re-integrated', async () => {
    const w = world('c3', undefined, 'c6');
    await runStep(w);
    const r = w.store.record;
    const child = (id: string) => r.children.find((c) => c.task_id === id)!;
    expect(child('c6')).toMatchObject({ state: 'needs_human', commit: null });
    expect(child('c6').reason).toBe('batch_integration_conflict: f/shared (rebuilding without c3)');
    expect(w.lanes.restored.sort()).toEqual(['/lanes/c3', '/lanes/c6']);
    expect(w.lanes.retired).toEqual(['/lanes/c5']);
    expect(r.commits.length).toBe(5); // c1 c2 kept, c4 c7 c8 re-integrated
    expect(
      ['c4', 'c7', 'c8'].every((id) => child(id).commit !== null && r.commits.includes(child(id).commit!)),
    ).toBe(true);
  });
});

describe('two culprits', () => {
  it('evicts the first; the rebuilt tip is still red and the reason says so', async () => {
    const w = world(['c2', 'c6']);
    await runStep(w);
    const c2 = w.store.record.children.find((c) => c.task_id === 'c2')!;
    expect(c2.state).toBe('needs_human');
    expect(c2.reason).toMatch(/; the rebuilt tip [0-9a-f]{12} is still red: whole$/);
    expect(w.store.record.final_verification).toBeUndefined();
  });
});

describe('applyEviction', () => {
  it('keeps the prefix, gives replayed children their new commits, and passes the invariants', () => {
    const w = world('c3');
    const r = applyEviction(w.store.record, {
      culprit: 'c3',
      culpritReason: 'final_check_failed: whole',
      conflicts: [{ task_id: 'c7', reason: 'batch_integration_conflict: f/x' }],
      keptCommits: [SHA(100), SHA(101)],
      replayed: [
        { task_id: 'c4', commit: SHA(900) },
        { task_id: 'c6', commit: SHA(901) },
        { task_id: 'c8', commit: SHA(902) },
      ],
    });
    expect(checkRecordInvariants(r)).toEqual([]);
    expect(r.commits).toEqual([SHA(100), SHA(101), SHA(900), SHA(901), SHA(902)]);
    expect(r.children.find((c) => c.task_id === 'c5')).toMatchObject({
      state: 'skipped_blocked',
      lane: null,
    });
    expect(r.children.find((c) => c.task_id === 'c7')).toMatchObject({ state: 'needs_human', commit: null });
  });
});

describe('lineage during a rebuild', () => {
  const gitAt = (tip: string) =>
    ({
      branchTip: async () => tip,
      isAncestor: async () => false,
      commitsBetween: async () => [],
    }) as unknown as GitPort;

  it('accepts the recorded rebuilt tip while the eviction is being recorded, and nothing else', async () => {
    const w = world('c3');
    const from = w.store.record.commits.at(-1)!;
    const fv = {
      phase: 'evict' as const,
      tip: from,
      commits: w.store.record.commits,
      failing: ['whole'],
      good: 2,
      bad: 3,
      runs: 4,
      rebuild: { from, to: SHA(777), culprit: 'c3', evicted: ['c3', 'c5'], commits: [], conflicts: [] },
    };
    const record = { ...w.store.record, final_verification: fv };
    expect(checkRecordInvariants(record)).toEqual([]);
    expect((await classifyLineage(gitAt(SHA(777)), record)).kind).toBe('equal');
    expect((await classifyLineage(gitAt(SHA(778)), record)).kind).toBe('broken');
    // Outside the evict phase the same tip is a broken lineage.
    const bisecting = { ...record, final_verification: { ...fv, phase: 'bisect' as const } };
    expect((await classifyLineage(gitAt(SHA(777)), bisecting)).kind).toBe('broken');
    expect((await classifyLineage(gitAt(SHA(777)), w.store.record)).kind).toBe('broken');
  });
});
