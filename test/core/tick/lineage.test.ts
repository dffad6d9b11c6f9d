import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LanesError } from '../../../src/core/basics/errors.js';
import { batchPaths } from '../../../src/store/state-dir.js';
import { startBatch } from '../../helpers/batch.js';
import { git, makeRepo, snapshotTree, tempDir } from '../../helpers/repo.js';
import {
  freshApproval,
  handCommit,
  rev,
  parentsOf,
  worktreePaths,
  journalOf,
  recordOf,
  childOf,
  handoffs,
  work,
  provision,
  playUntilStopped,
} from '../../helpers/tick-git.js';
// The core runner driven tick by tick against real git repositories: the test plays the
// steward (git worktree add/remove) and the executor (writes files in a lane, then says
// the executor exited). Never mocks git; never commits in the user's main worktree.
// The CLI tests need `npm run -s build` first.

describe('lineage of the batch branch', () => {
  const PLAN = `
batch: line
max_parallel: 2
children:
  - id: T1
    goal: write a/one.txt
    scope: ["a/**"]
    acceptance: [{ id: A1, run: "grep -qx T1 a/one.txt" }]
  - id: T2
    goal: write b/two.txt
    scope: ["b/**"]
    acceptance: [{ id: A1, run: "grep -qx T2 b/two.txt" }]
  - id: T3
    goal: write c/three.txt after T1
    blocked_by: [T1]
    scope: ["c/**"]
    acceptance: [{ id: A1, run: "grep -qx T3 c/three.txt && grep -qx T1 a/one.txt" }]
`;
  const FILES = { T1: { 'a/one.txt': 'T1\n' }, T2: { 'b/two.txt': 'T2\n' }, T3: { 'c/three.txt': 'T3\n' } };

  it('(a) adopts a hand commit added between ticks and builds later integrations on it', async () => {
    const root = await makeRepo({ 'README.md': '# line\n' });
    const d = await startBatch(root, PLAN);
    const base = recordOf(d).base_head;
    let r = await provision(d, await d.tick());
    const hand = await handCommit(root, 'batch/line', { 'docs/hand.md': 'by hand\n' }, 'docs by hand\n');
    r = await d.tick();
    // Not adopted silently: held for a human, the commit named, nothing built on it yet.
    expect(r.batch_state).toBe('needs_human');
    expect(recordOf(d).foreign_head).toEqual({ from: base, to: hand, commits: [hand] });
    expect(r.reason).toContain(`by 1 commit lanes did not make (${hand.slice(0, 12)})`);
    expect(recordOf(d).adopted_heads).toEqual([]);
    r = await d.tick({ approval: freshApproval() });
    expect(r.batch_state).toBe('running');
    expect(recordOf(d).foreign_head).toBeUndefined();
    expect(recordOf(d).adopted_heads).toEqual([{ from: base, to: hand }]);
    expect(journalOf(d).filter((e) => e.event === 'head-adopted')).toHaveLength(1);

    const played = await playUntilStopped(d, r, FILES);
    expect(played.report.batch_state).toBe('completed');
    const record = recordOf(d);
    expect(record.adopted_heads).toEqual([{ from: base, to: hand }]);
    const chain = (await git(root, 'rev-list', '--reverse', `${base}..batch/line`)).trim().split('\n');
    expect(chain).toEqual([hand, ...record.commits]);
    expect(await parentsOf(root, record.commits[0]!)).toEqual([hand]);
    // T3 started after the hand commit and T1 (and T2, integrated in the same tick).
    expect(childOf(record, 'T3').lane!.base_head).toBe(record.commits[1]);
    await git(
      root,
      'merge-base',
      '--is-ancestor',
      childOf(record, 'T1').commit!,
      childOf(record, 'T3').lane!.base_head,
    );
    expect(await git(root, 'show', 'batch/line:docs/hand.md')).toBe('by hand');
    // A fast-forward is adopted once; no second adoption on the following ticks.
    expect(journalOf(d).filter((e) => e.event === 'head-adopted')).toHaveLength(1);
  });

  it('(b) a reset backwards fails the batch, parks every child in flight and keeps every lane', async () => {
    const root = await makeRepo({ 'README.md': '# line\n' });
    const d = await startBatch(root, PLAN);
    const base = recordOf(d).base_head;
    let r = await provision(d, await d.tick());
    r = await d.tick({ exited: [work(d.lanePath('T1'), 'T1', FILES.T1)] });
    expect(childOf(r, 'T1').state).toBe('integrated');
    expect(handoffs(r, 'provision').map((h) => h.task_id)).toEqual(['T3']);
    r = await provision(d, r); // T3 in flight on top of T1's integration; T2 still in flight
    expect(childOf(r, 'T2').state).toBe('enrolled');
    expect(childOf(r, 'T3').state).toBe('enrolled');

    await git(root, 'update-ref', 'refs/heads/batch/line', base);
    r = await d.tick();
    expect(r.batch_state).toBe('failed');
    expect(r.reason).toMatch(/^batch_head_lineage_broken/);
    const record = recordOf(d);
    expect(record.batch_state).toBe('failed');
    for (const id of ['T2', 'T3']) {
      expect(childOf(record, id).state).toBe('needs_human');
      expect(childOf(record, id).reason).toMatch(/^batch_head_lineage_broken/);
    }
    expect(childOf(record, 'T1').state).toBe('integrated');
    expect(journalOf(d).some((e) => e.event === 'batch-failed')).toBe(true);
    const worktrees = await worktreePaths(root);
    for (const id of ['T1', 'T2', 'T3']) expect(worktrees).toContain(realpathSync(d.lanePath(id)));
    expect(await rev(root, 'refs/heads/batch/line')).toBe(base);

    // A failed batch is terminal: another tick moves nothing.
    const bytes = readFileSync(batchPaths(d.repo.stateDir, 'line').record);
    expect((await d.tick()).batch_state).toBe('failed');
    expect(readFileSync(batchPaths(d.repo.stateDir, 'line').record).equals(bytes)).toBe(true);
  });

  it("(c) an unrecorded commit carrying this batch's Lanes-Batch trailer fails the batch", async () => {
    const root = await makeRepo({ 'README.md': '# line\n' });
    const d = await startBatch(root, PLAN);
    let r = await provision(d, await d.tick());
    const fake = await handCommit(
      root,
      'batch/line',
      { 'a/one.txt': 'T1\n' },
      'lanes(T1): write a/one.txt\n\nLanes-Batch: line\nLanes-Task: T1\nLanes-Run: run-forged\nLanes-Base: 0000000000000000000000000000000000000000\n',
    );
    r = await d.tick({ exited: [work(d.lanePath('T1'), 'T1', FILES.T1)] });
    expect(r.batch_state).toBe('failed');
    expect(r.reason).toMatch(/^batch_head_lineage_broken/);
    expect(r.reason).toContain(fake.slice(0, 12));
    const record = recordOf(d);
    expect(record.adopted_heads).toEqual([]);
    expect(record.commits).toEqual([]);
    for (const id of ['T1', 'T2']) expect(childOf(record, id).reason).toMatch(/^batch_head_lineage_broken/);
    expect(childOf(record, 'T3').state).toBe('skipped_blocked');
    expect(await rev(root, 'refs/heads/batch/line')).toBe(fake);
    for (const id of ['T1', 'T2']) expect(await worktreePaths(root)).toContain(realpathSync(d.lanePath(id)));
  });
});

// ---------------------------------------------------------------- 5. batch branch checked out

describe('batch_branch_checked_out', () => {
  it('refuses a tick while a worktree has the batch branch checked out, writing nothing', async () => {
    const root = await makeRepo({ 'README.md': '# out\n' });
    const d = await startBatch(
      root,
      `
batch: out
children:
  - id: T1
    goal: write a/one.txt
    scope: ["a/**"]
    acceptance: [{ id: A1, run: "grep -qx T1 a/one.txt" }]
`,
    );
    await provision(d, await d.tick());
    const extra = join(tempDir(), 'on-batch');
    await git(root, 'worktree', 'add', '-q', extra, 'batch/out');

    const paths = batchPaths(d.repo.stateDir, 'out');
    const recordBytes = readFileSync(paths.record);
    const state = snapshotTree(d.repo.stateDir);
    const exit = work(d.lanePath('T1'), 'T1', { 'a/one.txt': 'T1\n' });
    const error = await d.tick({ exited: [exit] }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(LanesError);
    expect((error as LanesError).code).toBe('batch_branch_checked_out');
    expect((error as LanesError).message).toContain(realpathSync(extra));
    expect(readFileSync(paths.record).equals(recordBytes)).toBe(true);
    expect(snapshotTree(d.repo.stateDir)).toEqual(state);

    // Once the branch is free again the same tick goes through.
    await git(root, 'worktree', 'remove', extra);
    const r = await d.tick({ exited: [exit] });
    expect(r.batch_state).toBe('completed');
  });
});

// ---------------------------------------------------------------- 6. the CLI
