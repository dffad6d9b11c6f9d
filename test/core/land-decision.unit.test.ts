import { describe, expect, it } from 'vitest';
import { describeRefusal, planClean } from '../../src/core/whole-batch/clean.js';
import { decideLand, decidePush, defaultInto } from '../../src/core/whole-batch/land.js';
import type { LandFacts } from '../../src/core/whole-batch/land.js';
import type { BatchRecord } from '../../src/core/records/record.js';
import { preparedRecord, SHA } from '../helpers/records.js';

// The decisions of `lanes land` and `lanes clean`, from facts, without git.

const facts = (patch: Partial<LandFacts> = {}): LandFacts => ({
  batchId: 'b1',
  batchState: 'completed',
  batchBranch: 'batch/b1',
  batchTip: SHA(9),
  into: 'main',
  intoTip: SHA(1),
  canFastForward: true,
  alreadyLanded: false,
  merge: false,
  checkedOut: null,
  ...patch,
});

describe('decideLand', () => {
  it('fast-forwards an unmoved base, checked out and clean or not checked out', () => {
    expect(decideLand(facts())).toEqual({ kind: 'fast_forward' });
    expect(decideLand(facts({ checkedOut: { path: '/r', clean: true } }))).toEqual({ kind: 'fast_forward' });
  });

  it('merges a moved base only with --merge, else refuses naming --merge', () => {
    expect(decideLand(facts({ canFastForward: false, merge: true }))).toEqual({ kind: 'merge' });
    const refused = decideLand(facts({ canFastForward: false }));
    expect(refused.kind === 'refuse' && refused.reason).toContain('--merge');
  });

  it('refuses a dirty checked-out base, a batch not completed, a missing branch, the batch branch itself', () => {
    const dirty = decideLand(facts({ checkedOut: { path: '/r', clean: false } }));
    expect(dirty.kind === 'refuse' && dirty.reason).toContain('/r, which has changes');
    const running = decideLand(facts({ batchState: 'needs_human' }));
    expect(running.kind === 'refuse' && running.reason).toContain('needs_human, not completed');
    const missing = decideLand(facts({ intoTip: null }));
    expect(missing.kind === 'refuse' && missing.reason).toContain('no branch "main"');
    expect(decideLand(facts({ into: 'batch/b1' })).kind).toBe('refuse');
  });

  it('already landed: nothing to do, even when the worktree has changes', () => {
    expect(decideLand(facts({ alreadyLanded: true, checkedOut: { path: '/r', clean: false } }))).toEqual({
      kind: 'already',
    });
  });

  it('pushes unless the remote has commits the landed branch lacks', () => {
    expect(decidePush({ remote: 'o', into: 'main', remoteTip: null, remoteContained: true }).kind).toBe(
      'push',
    );
    expect(decidePush({ remote: 'o', into: 'main', remoteTip: SHA(3), remoteContained: true }).kind).toBe(
      'push',
    );
    expect(decidePush({ remote: 'o', into: 'main', remoteTip: SHA(3), remoteContained: false }).kind).toBe(
      'refuse',
    );
  });

  it('lands on the plan base, or the current branch when the base is HEAD', () => {
    expect(defaultInto('main', 'dev')).toBe('main');
    expect(defaultInto('refs/heads/rel', null)).toBe('rel');
    expect(defaultInto('HEAD', 'dev')).toBe('dev');
    expect(defaultInto('HEAD', null)).toBeNull();
  });
});

describe('planClean', () => {
  const record = (states: Record<string, BatchRecord['children'][number]['state']>): BatchRecord => {
    const r = preparedRecord('b1', { T1: [], T2: [], T3: [] });
    return { ...r, children: r.children.map((c) => ({ ...c, state: states[c.task_id] ?? c.state })) };
  };

  it('lets integrated lanes go, names dirty lanes and unintegrated lane commits', () => {
    const r = record({ T1: 'released', T2: 'needs_human', T3: 'enrolled' });
    const plan = planClean(r, [
      { taskId: 'T1', worktree: null, dirty: false, unmergedCommits: true },
      { taskId: 'T2', worktree: null, dirty: false, unmergedCommits: true },
      { taskId: 'T3', worktree: '/l/T3', dirty: true, unmergedCommits: false },
    ]);
    expect(plan.atRisk).toEqual([
      { taskId: 'T2', why: 'commits on its lane branch that are not integrated' },
      { taskId: 'T3', why: 'changes in /l/T3' },
    ]);
    expect(describeRefusal('b1', plan)).toContain('T2: commits on its lane branch');
  });

  it("names an evicted lane commit unless the child's work is integrated again", () => {
    const r = record({ T1: 'skipped_blocked', T2: 'released' });
    const plan = planClean(r, [
      { taskId: 'T1', worktree: null, dirty: false, unmergedCommits: false, evictedCommit: true },
      { taskId: 'T2', worktree: null, dirty: false, unmergedCommits: false, evictedCommit: true },
    ]);
    expect(plan.atRisk.map((a) => a.taskId)).toEqual(['T1']);
  });

  it('an unused lane (no change, branch on the batch branch) is not at risk', () => {
    const r = record({ T1: 'lane_admitted' });
    expect(
      planClean(r, [{ taskId: 'T1', worktree: '/l', dirty: false, unmergedCommits: false }]).atRisk,
    ).toEqual([]);
  });
});
