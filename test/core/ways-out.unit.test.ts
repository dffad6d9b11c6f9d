import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { cancelBatch, cancelRefusal } from '../../src/core/ways-out/cancel.js';
import {
  checkDrop,
  describeDropped,
  dropChildren,
  dropClosure,
  dropRefusal,
  lanesToTrash,
} from '../../src/core/ways-out/drop.js';
import { ExitCode } from '../../src/core/basics/errors.js';
import { newKernelRecord } from '../../src/core/records/kernel.js';
import { parkedAdvice } from '../../src/core/ways-out/next-steps.js';
import { parsePlanText } from '../../src/core/plan/plan.js';
import type { BatchRecord } from '../../src/core/records/record.js';
import { checkRecordInvariants } from '../../src/core/records/record.js';
import { checkLimits, limitsRefusal, withLimits } from '../../src/core/ways-out/reopen.js';
import {
  conflictPathsOf,
  laneConflictReason,
  reworkedKernel,
  reworkedRecord,
} from '../../src/core/ways-out/rework-onto-head.js';
import { budgetSpent, startableChildren } from '../../src/core/steps/schedule.js';
import {
  admitLane,
  commitLane,
  enroll,
  integrate,
  park,
  setBatchState,
  settle,
} from '../../src/core/records/transitions.js';
import { waitVerdict } from '../../src/core/ways-out/wait-verdict.js';
import { preparedRecord, SHA } from '../helpers/records.js';

// The pure rules behind the ways out of a stopped batch (docs/DECISIONS.md, "No dead
// ends"): drop, cancel, new limits on resume, rework onto the new head, the parked
// child's scope, `wait`'s verdict. No git, no processes.

const lane = (r: BatchRecord, id: string) => ({
  path: `/lanes/${r.batch_id}/${id}`,
  branch: `lane/${r.batch_id}/${id}`,
  base_head: SHA(1),
});

/** T1 integrated, T2 parked with a lane commit, T3 (← T2) skipped, T4 (← T3) skipped, T5 enrolled. */
function stopped(): BatchRecord {
  let r: BatchRecord = {
    ...preparedRecord('b1', { T1: [], T2: [], T3: ['T2'], T4: ['T3'], T5: [] }),
    batch_state: 'running',
  };
  r = deliver(r, 'T1', 0xa1, 0xc1);
  r = settle(enroll(admitLane(r, 'T2', lane(r, 'T2')), 'T2', 'run-2'), 'T2');
  r = commitLane(r, 'T2', SHA(0xa2));
  r = park(r, 'T2', 'batch_integration_conflict: f.txt');
  r = enroll(admitLane(r, 'T5', lane(r, 'T5')), 'T5', 'run-5');
  expect(checkRecordInvariants(r)).toEqual([]);
  return r;
}

/** admit → enroll → settle → lane commit → integrate. */
function deliver(r: BatchRecord, id: string, laneCommit: number, commit: number): BatchRecord {
  let next = enroll(admitLane(r, id, lane(r, id)), id, `run-${id}`);
  next = commitLane(settle(next, id), id, SHA(laneCommit));
  return integrate(next, id, SHA(commit));
}

const stateOf = (r: BatchRecord, id: string) => r.children.find((c) => c.task_id === id)!;

describe('drop', () => {
  it('drops the child and every child depending on it, transitively, keeping the lane binding', () => {
    const r = stopped();
    expect(dropClosure(r, 'T2')).toEqual(['T2', 'T3', 'T4']);
    const next = dropChildren(r, 'T2', 'not needed');
    expect(checkRecordInvariants(next)).toEqual([]);
    expect(stateOf(next, 'T2')).toMatchObject({ state: 'dropped', reason: 'not needed', commit: null });
    expect(stateOf(next, 'T2').lane?.lane_commit).toBe(SHA(0xa2)); // where its work is
    expect(stateOf(next, 'T3')).toMatchObject({ state: 'dropped', reason: 'dropped with T2', lane: null });
    expect(stateOf(next, 'T4').state).toBe('dropped');
    expect(stateOf(next, 'T5').state).toBe('enrolled');
    expect(lanesToTrash(next).map((l) => l.task_id)).toEqual(['T2']);
    expect(describeDropped(next)).toContain('T2 (not needed; work on lane/b1/T2)');
    // Dropping again changes nothing.
    expect(dropChildren(next, 'T2', 'other')).toEqual(next);
  });

  it('drops a child in flight (its executor is stopped by the coordinator first)', () => {
    const next = dropChildren(stopped(), 'T5');
    expect(stateOf(next, 'T5')).toMatchObject({ state: 'dropped', reason: 'dropped by the user' });
    expect(checkRecordInvariants(next)).toEqual([]);
  });

  it('refuses an integrated child and an unknown child', () => {
    const r = stopped();
    expect(dropRefusal(r, 'T1')).toMatch(/T1 is integrated/);
    expect(dropRefusal(r, 'nope')).toMatch(/no child "nope"/);
    expect(() => checkDrop(r, 'T1')).toThrow(expect.objectContaining({ exitCode: ExitCode.badInput }));
  });

  it('a batch whose other children are integrated can complete, listing the dropped ones', () => {
    let r = dropChildren(dropChildren(stopped(), 'T2'), 'T5');
    r = setBatchState(r, 'completed');
    expect(checkRecordInvariants(r)).toEqual([]);
  });
});

describe('cancel', () => {
  it('drops every child holding unintegrated work with its dependents; integrated stay; the batch is cancelled', () => {
    const next = cancelBatch(stopped());
    expect(checkRecordInvariants(next)).toEqual([]);
    expect(next.batch_state).toBe('cancelled');
    expect(next.children.map((c) => c.state)).toEqual([
      'integrated',
      'dropped',
      'dropped',
      'dropped',
      'dropped',
    ]);
    expect(stateOf(next, 'T5').reason).toBe('batch cancelled');
    expect(stateOf(next, 'T3').reason).toBe('dropped with T2');
  });

  it('leaves pending children pending and refuses a batch that has ended', () => {
    const r = { ...preparedRecord(), batch_state: 'running' as const };
    const next = cancelBatch(r);
    expect(next.children.every((c) => c.state === 'pending')).toBe(true);
    expect(checkRecordInvariants(next)).toEqual([]);
    expect(cancelRefusal(next)).toMatch(/has ended \(cancelled\)/);
    expect(cancelRefusal({ ...r, batch_state: 'budget_stopped' })).toBeNull();
  });
});

describe('new limits on resume', () => {
  const r = { ...preparedRecord(), batch_state: 'budget_stopped' as const };
  it('a budget_stopped batch goes on only with a larger budget', () => {
    expect(limitsRefusal(r, {})).toMatch(/--budget <n> larger than that/);
    expect(limitsRefusal(r, { budget: 3 })).toMatch(/must be larger than the current max_children 3/);
    expect(() => checkLimits(r, { budget: 2 })).toThrow(expect.objectContaining({ exitCode: 2 }));
    expect(withLimits(r, { budget: 5, parallel: 4 })).toMatchObject({
      budget: { max_children: 5, qa_failure_limit: 3 },
      max_parallel: 4,
    });
  });
  it('other batches take --parallel alone', () => {
    expect(withLimits({ ...r, batch_state: 'needs_human' }, { parallel: 1 }).max_parallel).toBe(1);
  });
});

describe('rework onto the new head', () => {
  const head = SHA(0xee);
  it('clean: the child is enrolled again on the new base, without its lane commit', () => {
    const next = reworkedRecord(stopped(), 'T2', head, []);
    expect(checkRecordInvariants(next)).toEqual([]);
    expect(stateOf(next, 'T2')).toMatchObject({ state: 'enrolled', reason: null });
    expect(stateOf(next, 'T2').lane).toMatchObject({ base_head: head, lane_commit: null, run_id: 'run-2' });
    expect(stateOf(next, 'T3').state).toBe('pending'); // its dependents are no longer skipped
  });
  it('conflicts: the child stays parked lane_conflict with the paths, on the new base', () => {
    const next = reworkedRecord(stopped(), 'T2', head, ['f.txt', 'g.txt']);
    expect(checkRecordInvariants(next)).toEqual([]);
    expect(stateOf(next, 'T2')).toMatchObject({
      state: 'needs_human',
      reason: 'lane_conflict: f.txt, g.txt',
    });
    expect(stateOf(next, 'T2').lane?.base_head).toBe(head);
    expect(conflictPathsOf(stateOf(next, 'T2').reason)).toEqual(['f.txt', 'g.txt']);
    expect(conflictPathsOf('batch_integration_conflict: f.txt')).toBeNull();
    expect(laneConflictReason(['a'])).toBe('lane_conflict: a');
  });
  it('the kernel: QA again when clean; a rework prompt naming the files when not; a review again', () => {
    const k = {
      ...newKernelRecord({
        batchId: 'b1',
        taskId: 'T2',
        runId: 'run-2',
        lanePath: '/l',
        baseHead: SHA(1),
        reviewRequired: true,
        now: 'n',
      }),
      lifecycle: 'done' as const,
      next_obligation: 'none' as const,
      review: { required: true, verdict: 'approved' as const, at: 'n' },
    };
    const clean = reworkedKernel(k, head, [], 'later');
    expect(clean).toMatchObject({ lifecycle: 'active', next_obligation: 'run_qa', base_head: head });
    expect(clean.review.verdict).toBeNull();
    const conflict = reworkedKernel(k, head, ['f.txt'], 'later');
    expect(conflict.next_obligation).toBe('implement');
    expect(conflict.rework_feedback).toContain('  f.txt');
  });
  it('refuses a child that is not a parked lane', () => {
    expect(() => reworkedRecord(stopped(), 'T5', head, [])).toThrow(/not a parked lane/);
  });
});

describe('a parked child holds its scope', () => {
  const plan = parsePlanText(
    `batch: b1
max_parallel: 2
children:
  - { id: A, goal: a, scope: [f.txt], acceptance: [{ id: c, run: "true" }], executor: script, run: "true" }
  - { id: B, goal: b, scope: [f.txt], acceptance: [{ id: c, run: "true" }], executor: script, run: "true" }
  - { id: C, goal: c, scope: [g.txt], acceptance: [{ id: c, run: "true" }], executor: script, run: "true" }
`,
    'plan.yaml',
    YAML,
  );
  it('no overlapping sibling starts while it is parked; once dropped, it does', () => {
    let r: BatchRecord = { ...preparedRecord('b1', { A: [], B: [], C: [] }), batch_state: 'running' };
    r = park(enroll(admitLane(r, 'A', lane(r, 'A')), 'A', 'run-a'), 'A', 'QA failure limit reached');
    expect(startableChildren(r, plan)).toEqual(['C']);
    expect(startableChildren(dropChildren(r, 'A'), plan)).toEqual(['B', 'C']);
  });
  it('a child dropped before it took a lane does not count against the budget', () => {
    const r: BatchRecord = {
      ...preparedRecord('b1', { A: [], B: [] }),
      batch_state: 'running',
      budget: { max_children: 1, qa_failure_limit: 3 },
    };
    expect(budgetSpent(dropChildren(r, 'A'))).toBe(false);
  });
});

describe('what a stopped batch says to do', () => {
  it('names fix-and-resume, R, drop and cancel, only commands that exist', () => {
    const text = parkedAdvice(stopped());
    expect(text).toContain('lanes resume b1 --approve');
    expect(text).toContain('lanes drop b1 T2');
    expect(text).toContain('lanes cancel b1');
  });
});

describe('wait', () => {
  it('0 on a state asked for, 3 on a stop for a human, 4 on another end, waits otherwise', () => {
    expect(waitVerdict('completed', ['completed'])).toEqual({ done: true, exitCode: 0 });
    expect(waitVerdict('needs_human', ['completed'])).toEqual({ done: true, exitCode: 3 });
    expect(waitVerdict('budget_stopped', ['completed'])).toEqual({ done: true, exitCode: 3 });
    expect(waitVerdict('running', ['completed'], true)).toEqual({ done: true, exitCode: 3 });
    expect(waitVerdict('cancelled', ['completed'])).toEqual({ done: true, exitCode: 4 });
    expect(waitVerdict('failed', ['completed'])).toEqual({ done: true, exitCode: 4 });
    expect(waitVerdict('completed', ['needs_human'])).toEqual({ done: true, exitCode: 4 });
    expect(waitVerdict('needs_human', ['needs_human'])).toEqual({ done: true, exitCode: 0 });
    expect(waitVerdict('running', ['completed'])).toEqual({ done: false });
  });
});

describe('the token budget on resume', () => {
  const stopped = {
    ...preparedRecord(),
    batch_state: 'budget_stopped' as const,
    budget: { max_children: 3, qa_failure_limit: 3, max_tokens: 1000 },
    tokens_spent: 1200,
  };
  it('a batch the token budget stopped goes on only with a larger --max-tokens', () => {
    expect(limitsRefusal(stopped, {})).toMatch(
      /spent its token budget \(1000: 1200 reported\); go on with --max-tokens/,
    );
    expect(limitsRefusal(stopped, { budget: 9 })).toMatch(/--max-tokens/);
    expect(limitsRefusal(stopped, { maxTokens: 1100 })).toMatch(/must be larger than the 1200 tokens spent/);
    expect(withLimits(stopped, { maxTokens: 5000 }).budget).toMatchObject({
      max_tokens: 5000,
      max_children: 3,
    });
  });
});
