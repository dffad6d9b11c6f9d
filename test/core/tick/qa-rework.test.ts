import { realpathSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LanesError } from '../../../src/core/basics/errors.js';
import { startBatch, writeFiles } from '../../helpers/batch.js';
import { git, makeRepo, snapshotTree } from '../../helpers/repo.js';
import {
  FILES,
  stateDir,
  readRecord,
  readKernel,
  child,
  handoffsOf,
  handoff,
  provisionTasks,
  oneChildLane,
  exited,
  batchHead,
  releaseAll,
  check,
} from '../../helpers/tick-lanes.js';
// Lanes through the core runner with real git: admission refusals from real worktrees,
// the QA guards, the QA failure limit and the resume after it, human review, and a
// lane that disappears. The test plays steward (git worktree add/remove) and executor
// (writes files into the lane, then reports the exit).

describe('QA guards and rework', () => {
  const plan = (extra = '') => `
batch: qa
max_parallel: 2
${extra}
children:
  - { id: S, goal: Write s, scope: ["s/**"], acceptance: [${check('ok', 'true')}] }
  - { id: E, goal: Write e, scope: ["e/**"], acceptance: [${check('ok', 'true')}] }
`;

  it('fails QA for a change outside the scope and names the path in the rework feedback', async () => {
    const repoDir = await makeRepo(FILES);
    const d = await startBatch(repoDir, plan());
    await d.provisionAll(await d.tick());
    writeFiles(d.lanePath('S'), { 's/ok.txt': 'in scope\n', 'docs/guide.md': 'edited outside the scope\n' });
    const report = await exited(d, 'S');

    const kernel = readKernel(repoDir, 'qa', 'S');
    const run = kernel.qa_runs.at(-1)!;
    expect(run.passed).toBe(false);
    expect(run.outside_scope).toEqual(['docs/guide.md']);
    expect(run.empty_delivery).toBe(false);
    expect(kernel.next_obligation).toBe('implement');
    expect(kernel.rework_feedback).toContain('docs/guide.md');
    expect(child(report, 'S')).toMatchObject({ state: 'enrolled', qa_failures: 1 });
    expect(handoff(report, 'executor', 'S')).toMatchObject({ next_obligation: 'implement' });
    expect(await batchHead(d)).toBe(readRecord(repoDir, 'qa').base_head);
  });

  it('fails QA when the executor changed nothing', async () => {
    const repoDir = await makeRepo(FILES);
    const d = await startBatch(repoDir, plan());
    await d.provisionAll(await d.tick());
    const report = await exited(d, 'E');

    const kernel = readKernel(repoDir, 'qa', 'E');
    const run = kernel.qa_runs.at(-1)!;
    expect(run).toMatchObject({ passed: false, empty_delivery: true, outside_scope: [], changed_paths: [] });
    expect(kernel.rework_feedback).toContain('No change');
    expect(child(report, 'E')).toMatchObject({ state: 'enrolled', qa_failures: 1 });
    expect(handoff(report, 'executor', 'E')).toMatchObject({ next_obligation: 'implement' });
  });

  it('sends a failed check back for rework with its output, then integrates the fixed lane', async () => {
    const valueCheck = check(
      'value',
      'echo "QA-MARKER-7f3a value=$(cat q/v.txt)"; test "$(cat q/v.txt)" = good',
    );
    const { repoDir, d } = await oneChildLane('rework', 'Q', 'q/**', valueCheck);
    writeFiles(d.lanePath('Q'), { 'q/v.txt': 'bad\n' });
    const failed = await exited(d, 'Q');

    expect(child(failed, 'Q')).toMatchObject({ state: 'enrolled', qa_failures: 1 });
    expect(failed.batch_state).toBe('running');
    const exec = handoff(failed, 'executor', 'Q');
    expect(exec).toMatchObject({ next_obligation: 'implement', lane_path: realpathSync(d.lanePath('Q')) });
    const kernel = readKernel(repoDir, 'rework', 'Q');
    expect(kernel.rework_feedback).toContain('Check value exited 1');
    expect(kernel.rework_feedback).toContain('QA-MARKER-7f3a value=bad');
    expect(kernel.qa_runs.at(-1)!.checks[0]!.tail).toContain('QA-MARKER-7f3a value=bad');

    writeFiles(d.lanePath('Q'), { 'q/v.txt': 'good\n' });
    const done = await exited(d, 'Q');
    expect(child(done, 'Q').state).toBe('integrated');
    expect(readKernel(repoDir, 'rework', 'Q')).toMatchObject({ lifecycle: 'done', rework_feedback: null });
    expect(done.batch_state).toBe('completed');
    expect(await git(repoDir, 'show', `batch/rework:q/v.txt`)).toBe('good');
  });
});

describe('QA failure limit and resume', () => {
  it('parks at the limit, skips dependents transitively, and resumes only on a fresh approval', async () => {
    const repoDir = await makeRepo(FILES);
    const d = await startBatch(
      repoDir,
      `
batch: limit
max_parallel: 2
budget: { qa_failure_limit: 2 }
children:
  - { id: P, goal: Write p, scope: ["p/**"], acceptance: [${check('value', 'test "$(cat p/v.txt)" = good')}] }
  - { id: S, goal: Write s, scope: ["s/**"], acceptance: [${check('ok', 'test -f s/out.txt')}] }
  - { id: D1, goal: Write d1, blocked_by: [P], scope: ["d1/**"], acceptance: [${check('ok', 'test -f d1/out.txt')}] }
  - { id: D2, goal: Write d2, blocked_by: [D1], scope: ["d2/**"], acceptance: [${check('ok', 'test -f d2/out.txt')}] }
`,
    );
    const started = await d.provisionAll(await d.tick());
    expect(started.children.filter((c) => c.state === 'enrolled').map((c) => c.task_id)).toEqual(['P', 'S']);

    writeFiles(d.lanePath('P'), { 'p/v.txt': 'bad\n' });
    const once = await exited(d, 'P');
    expect(child(once, 'P')).toMatchObject({ state: 'enrolled', qa_failures: 1 });

    const twice = await exited(d, 'P');
    expect(child(twice, 'P')).toMatchObject({
      state: 'needs_human',
      reason: 'QA failure limit reached',
      qa_failures: 2,
    });
    expect(child(twice, 'D1')).toMatchObject({
      state: 'skipped_blocked',
      reason: 'blocked by parked child P',
    });
    expect(child(twice, 'D2')).toMatchObject({
      state: 'skipped_blocked',
      reason: 'blocked by parked child D1',
    });
    expect(twice.batch_state).toBe('running'); // S is still in flight
    expect(handoff(twice, 'executor', 'P')).toBeUndefined();
    expect(handoff(twice, 'executor', 'S')).toBeDefined();

    writeFiles(d.lanePath('S'), { 's/out.txt': 's\n' });
    const stopped = await exited(d, 'S');
    expect(child(stopped, 'S').state).toBe('integrated');
    expect(stopped.batch_state).toBe('needs_human');
    expect(stopped.reason).toContain('P: QA failure limit reached');
    expect(handoffsOf(stopped, 'provision')).toEqual([]);
    const parkedRecord = readRecord(repoDir, 'limit');
    expect(parkedRecord.batch_state).toBe('needs_human');

    // An approval that is not later than the recorded confirmation is refused, exit 2.
    const stale = [
      parkedRecord.confirmation_time,
      new Date(Date.parse(parkedRecord.confirmation_time) - 1000).toISOString(),
    ];
    for (const confirmationTime of stale) {
      const before = snapshotTree(stateDir(repoDir));
      const refused = await d.tick({ approval: { confirmationTime } }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(LanesError);
      expect((refused as LanesError).exitCode).toBe(2);
      expect((refused as LanesError).message).toContain('fresh confirmation');
      expect(snapshotTree(stateDir(repoDir))).toStrictEqual(before);
    }
    // Without an approval the batch stays parked.
    expect((await d.tick()).batch_state).toBe('needs_human');

    // The human fixes the parked lane by hand and approves: QA runs on the lane as it is.
    writeFiles(d.lanePath('P'), { 'p/v.txt': 'good\n' });
    const approvedAt = new Date().toISOString();
    const resumed = await d.tick({ approval: { confirmationTime: approvedAt } });
    expect(resumed.batch_state).toBe('running');
    expect(child(resumed, 'P')).toMatchObject({ state: 'integrated', reason: null });
    const resumedKernel = readKernel(repoDir, 'limit', 'P');
    expect(resumedKernel.qa_runs).toHaveLength(3);
    expect(resumedKernel.qa_runs.at(-1)).toMatchObject({ passed: true, changed_paths: ['p/v.txt'] });
    expect(resumedKernel.attempts).toHaveLength(2); // no executor ran again: QA looked at the lane as it was
    expect(child(resumed, 'D1')).toMatchObject({ state: 'pending', reason: null });
    expect(child(resumed, 'D2')).toMatchObject({ state: 'pending', reason: null });
    expect(provisionTasks(resumed)).toEqual(['D1']);
    expect(readRecord(repoDir, 'limit').confirmation_time).toBe(approvedAt);
    expect(await git(repoDir, 'show', 'batch/limit:p/v.txt')).toBe('good');

    // Drive the rest of the batch to completion.
    let report = await d.provisionAll(await releaseAll(d, resumed));
    writeFiles(d.lanePath('D1'), { 'd1/out.txt': 'd1\n' });
    report = await exited(d, 'D1');
    expect(provisionTasks(report)).toEqual(['D2']);
    report = await d.provisionAll(await releaseAll(d, report));
    writeFiles(d.lanePath('D2'), { 'd2/out.txt': 'd2\n' });
    report = await exited(d, 'D2');
    expect(report.batch_state).toBe('completed');
    expect(readRecord(repoDir, 'limit').commits).toHaveLength(4);
  });
});

describe('human review', () => {
  it('waits for a verdict after QA passes; a rejection sends the lane back to implement', async () => {
    const repoDir = await makeRepo(FILES);
    const d = await startBatch(
      repoDir,
      `
batch: review
children:
  - { id: R, goal: Write r, review: human, scope: ["r/**"], acceptance: [${check('ok', 'test -f r/out.txt')}] }
`,
    );
    await d.provisionAll(await d.tick());
    writeFiles(d.lanePath('R'), { 'r/out.txt': 'first\n' });
    const waiting = await exited(d, 'R');
    expect(child(waiting, 'R').state).toBe('enrolled');
    expect(handoff(waiting, 'executor', 'R')).toMatchObject({ next_obligation: 'review' });
    expect(readKernel(repoDir, 'review', 'R').qa_runs.at(-1)).toMatchObject({ passed: true });

    // An unrelated tick leaves it waiting.
    expect(handoff(await d.tick(), 'executor', 'R')).toMatchObject({ next_obligation: 'review' });

    const rejected = await d.tick({ reviews: [{ task_id: 'R', verdict: 'rejected', note: 'Say second.' }] });
    expect(child(rejected, 'R').state).toBe('enrolled');
    expect(handoff(rejected, 'executor', 'R')).toMatchObject({ next_obligation: 'implement' });
    const kernel = readKernel(repoDir, 'review', 'R');
    expect(kernel.next_obligation).toBe('implement');
    expect(kernel.rework_feedback).toContain('rejected');
    expect(kernel.rework_feedback).toContain('Say second.');

    writeFiles(d.lanePath('R'), { 'r/out.txt': 'second\n' });
    const again = await exited(d, 'R');
    expect(child(again, 'R').state).toBe('enrolled');
    expect(handoff(again, 'executor', 'R')).toMatchObject({ next_obligation: 'review' });

    const approved = await d.tick({ reviews: [{ task_id: 'R', verdict: 'approved' }] });
    expect(child(approved, 'R').state).toBe('integrated');
    expect(approved.batch_state).toBe('completed');
    expect(await git(repoDir, 'show', 'batch/review:r/out.txt')).toBe('second');
  });
});
