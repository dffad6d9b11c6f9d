import { existsSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { endAttempt, laneFactsOf } from '../../src/core/steps/attempt-end.js';
import { BatchFiles } from '../../src/store/batch-files.js';
import { Steward } from '../../src/coordinator/lanes/steward.js';
import { DEFAULT_CONFIG } from '../../src/core/settings/config.js';
import { LaneWorktrees } from '../../src/git/ports/lane-worktrees.js';
import { LanesError } from '../../src/core/basics/errors.js';
import type { KernelRecord } from '../../src/core/records/kernel.js';
import type { BatchRecord, ChildRecord } from '../../src/core/records/record.js';
import type { Handoff, Report } from '../../src/core/records/report.js';
import { startBatch, writeFiles } from '../helpers/batch.js';
import type { Driver } from '../helpers/batch.js';
import { git, makeRepo, snapshotTree, tempDir } from '../helpers/repo.js';

// Lanes through the core runner with real git: admission refusals from real worktrees,
// the QA guards, the QA failure limit and the resume after it, human review, and a
// lane that disappears. The test plays steward (git worktree add/remove) and executor
// (writes files into the lane, then reports the exit).

const FILES = { 'README.md': '# test\n', 'docs/guide.md': 'guide\n' };

function stateDir(repoDir: string): string {
  return join(repoDir, '.git', 'lanes', 'batches');
}

function recordBytes(repoDir: string, batch: string): string {
  return readFileSync(join(stateDir(repoDir), `${batch}.json`), 'utf8');
}

function readRecord(repoDir: string, batch: string): BatchRecord {
  return JSON.parse(recordBytes(repoDir, batch)) as BatchRecord;
}

function readKernel(repoDir: string, batch: string, task: string): KernelRecord {
  const path = join(stateDir(repoDir), batch, 'tasks', `${task}.json`);
  return JSON.parse(readFileSync(path, 'utf8')) as KernelRecord;
}

function child(report: Report | BatchRecord, task: string): ChildRecord {
  const found = report.children.find((c) => c.task_id === task);
  if (!found) throw new Error(`no child ${task}`);
  return found;
}

function handoffsOf(report: Report, action: Handoff['action']): Handoff[] {
  return report.handoffs.filter((h) => h.action === action);
}

function handoff(report: Report, action: Handoff['action'], task: string): Handoff | undefined {
  return report.handoffs.find((h) => h.action === action && h.task_id === task);
}

function provisionTasks(report: Report): string[] {
  return handoffsOf(report, 'provision').map((h) => h.task_id);
}

/** A batch of one child with one check, its lane provisioned and admitted. */
async function oneChildLane(
  batch: string,
  id: string,
  scope: string,
  acceptance: string,
): Promise<{ repoDir: string; d: Driver }> {
  const repoDir = await makeRepo(FILES);
  const plan = `batch: ${batch}\nchildren:\n  - id: ${id}\n    goal: Write ${id}\n    scope: ["${scope}"]\n    acceptance:\n      - ${acceptance}\n`;
  const d = await startBatch(repoDir, plan);
  await d.provisionAll(await d.tick());
  return { repoDir, d };
}

function exited(d: Driver, ...tasks: string[]): Promise<Report> {
  return d.tick({ exited: tasks.map((task_id) => ({ task_id, code: 0, signal: null })) });
}

async function batchHead(d: Driver): Promise<string> {
  return (await git(d.repo.root, 'rev-parse', `refs/heads/batch/${d.plan.batch}`)).trim();
}

/** Releases every lane the report asks to release, then ticks so the releases are recorded. */
async function releaseAll(d: Driver, report: Report): Promise<Report> {
  for (const h of handoffsOf(report, 'release')) await d.release(h.task_id);
  return d.tick();
}

/** A refusal-only tick: exactly this refusal, and the batch record not rewritten. */
async function expectRefused(
  d: Driver,
  repoDir: string,
  offer: { task_id: string; path: string },
  reason: string,
) {
  const before = recordBytes(repoDir, d.plan.batch);
  const tasksBefore = snapshotTree(join(stateDir(repoDir), d.plan.batch, 'tasks'));
  const report = await d.tick({ offers: [offer] });
  expect(report.lane_refusals).toStrictEqual([{ task_id: offer.task_id, path: offer.path, reason }]);
  expect(recordBytes(repoDir, d.plan.batch)).toBe(before);
  expect(snapshotTree(join(stateDir(repoDir), d.plan.batch, 'tasks'))).toStrictEqual(tasksBefore);
  return report;
}

const check = (id: string, run: string) => `{ id: ${id}, run: ${JSON.stringify(run)} }`;

describe('admission refusals from real worktrees', () => {
  it('refuses each offer with exactly one reason and writes nothing', async () => {
    const repoDir = await makeRepo(FILES);
    const d = await startBatch(
      repoDir,
      `
batch: adm
max_parallel: 3
children:
  - { id: A, goal: Write a, scope: ["a/**"], acceptance: [${check('ok', 'test -f a/out.txt')}] }
  - { id: B, goal: Write b, scope: ["b/**"], acceptance: [${check('ok', 'test -f b/out.txt')}] }
  - { id: C, goal: Write c, blocked_by: [A], scope: ["c/**"], acceptance: [${check('ok', 'test -f c/out.txt')}] }
`,
    );
    const first = await d.tick();
    expect(first.batch_state).toBe('running');
    expect(provisionTasks(first)).toEqual(['A', 'B']);
    const base = await batchHead(d);
    const scratch = tempDir('lanes-offers-');

    // foreign repository: a worktree of another repository, on the right branch at a head.
    const other = await makeRepo(FILES);
    const foreignPath = join(scratch, 'foreign-A');
    await git(other, 'worktree', 'add', '-q', '-b', 'lane/adm/A', foreignPath);
    await expectRefused(d, repoDir, { task_id: 'A', path: foreignPath }, 'batch_lane_foreign_repository');
    // … a path that does not exist …
    const missing = join(scratch, 'no-such-lane');
    await expectRefused(d, repoDir, { task_id: 'A', path: missing }, 'batch_lane_foreign_repository');
    // … and a subdirectory of a real lane worktree of this repository.
    const laneA = await d.provision('A', base);
    await expectRefused(
      d,
      repoDir,
      { task_id: 'A', path: join(laneA, 'docs') },
      'batch_lane_foreign_repository',
    );

    // The coordinator's own worktree (the main repository root, by its realpath).
    await expectRefused(
      d,
      repoDir,
      { task_id: 'A', path: realpathSync(repoDir) },
      'batch_lane_is_coordinator',
    );

    // A worktree of this repository on a differently named branch.
    const wrongBranch = join(scratch, 'wrong-branch-A');
    await git(repoDir, 'worktree', 'add', '-q', '-b', 'wrong/A', wrongBranch, base);
    await expectRefused(d, repoDir, { task_id: 'A', path: wrongBranch }, 'batch_lane_branch_mismatch');

    // A lane with an untracked file in it.
    const laneB = await d.provision('B', base);
    writeFiles(laneB, { 'b/stray.txt': 'left over\n' });
    await expectRefused(d, repoDir, { task_id: 'B', path: laneB }, 'batch_lane_dirty');
    rmSync(join(laneB, 'b'), { recursive: true, force: true });

    // Unknown children: an id not in the plan, and C whose dependency A is not integrated
    // (offered a real lane on its own branch at the batch head).
    await expectRefused(d, repoDir, { task_id: 'Z', path: laneA }, 'batch_lane_unknown_child');
    const staleC = await d.provision('C', base);
    await expectRefused(d, repoDir, { task_id: 'C', path: staleC }, 'batch_lane_unknown_child');

    // Admit A and B. The same path offered twice in one tick is refused the second time:
    // A is no longer pending once the first offer enrolled it, so the refusal is
    // batch_lane_unknown_child (checked before the path facts, as in the seed).
    const admitted = await d.tick({
      offers: [
        { task_id: 'A', path: laneA },
        { task_id: 'B', path: laneB },
        { task_id: 'A', path: laneA },
      ],
    });
    expect(admitted.lane_refusals).toStrictEqual([
      { task_id: 'A', path: laneA, reason: 'batch_lane_unknown_child' },
    ]);
    expect(child(admitted, 'A').state).toBe('enrolled');
    expect(child(admitted, 'B').state).toBe('enrolled');
    expect(child(admitted, 'A').lane?.path).toBe(realpathSync(laneA));

    // A child already enrolled, offered again in a later tick.
    await expectRefused(d, repoDir, { task_id: 'A', path: laneA }, 'batch_lane_unknown_child');

    // A integrates: the batch head moves and C becomes startable at the new head.
    writeFiles(laneA, { 'a/out.txt': 'a\n' });
    const afterA = await exited(d, 'A');
    expect(child(afterA, 'A').state).toBe('integrated');
    const head = await batchHead(d);
    expect(head).not.toBe(base);
    expect(handoff(afterA, 'provision', 'C')).toMatchObject({ base_head: head });

    // C's lane was made at the old batch head.
    await expectRefused(d, repoDir, { task_id: 'C', path: staleC }, 'batch_lane_base_mismatch');

    // occupied: A's lane (integrated, not yet released) reused for C: the steward switched
    // that worktree to C's branch at the batch head, so every other fact checks out.
    await git(repoDir, 'worktree', 'remove', '--force', staleC);
    await git(repoDir, 'branch', '-q', '-D', 'lane/adm/C');
    await git(laneA, 'switch', '-q', '-c', 'lane/adm/C', head);
    await expectRefused(d, repoDir, { task_id: 'C', path: laneA }, 'batch_lane_occupied');

    // Nothing above moved a child: the batch goes on as before.
    const record = readRecord(repoDir, 'adm');
    expect(record.children.map((c) => [c.task_id, c.state])).toEqual([
      ['A', 'integrated'],
      ['B', 'enrolled'],
      ['C', 'pending'],
    ]);
  });
});

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

describe('release handoffs', () => {
  it('asks to release a delivered lane, not one whose release is in hand, and records it once gone', async () => {
    const { d } = await oneChildLane('rel', 'R', 'r/**', check('ok', 'test -f r/x.txt'));
    writeFiles(d.lanePath('R'), { 'r/x.txt': 'x\n' });
    const done = await exited(d, 'R');
    expect(child(done, 'R').state).toBe('integrated');
    expect(handoff(done, 'release', 'R')).toMatchObject({ lane_path: realpathSync(d.lanePath('R')) });
    // The steward has the release in hand: the lane is not asked for (nor looked at) again.
    expect(handoff(await d.tick({ releasing: ['R'] }), 'release', 'R')).toBeUndefined();
    // Still there and clean, and no longer in hand: asked for again.
    expect(handoff(await d.tick(), 'release', 'R')).toBeDefined();
    await d.release('R');
    const released = await d.tick({ releasing: ['R'] });
    expect(child(released, 'R').state).toBe('released');
  });
});

/** The coordinator's own steward, over the driver's repository and batch. */
function stewardOf(d: Driver): Steward {
  const worktrees = new LaneWorktrees(d.repo.root);
  return new Steward(d.repo.root, d.plan.batch, DEFAULT_CONFIG, () => tempDir('logs-'), worktrees);
}

describe('a release that finds changes in the lane', () => {
  it('keeps the lane on its branch, is not asked for again while the changes stay, and goes once they are gone', async () => {
    const { d } = await oneChildLane('relx', 'R', 'r/**', check('ok', 'test -f r/x.txt'));
    const lane = realpathSync(d.lanePath('R'));
    writeFiles(lane, { 'r/x.txt': 'x\n' });
    const done = await exited(d, 'R');
    const commit = child(done, 'R').commit!;
    const tip = (await git(lane, 'rev-parse', 'HEAD')).trim();
    writeFiles(lane, { 'notes.txt': 'mine\n' }); // (after the integration: not the lane's delivery)
    // The coordinator's steward checks for changes itself: the report asks without a status.
    const steward = stewardOf(d);
    const asked = handoff(await d.tick({ releaseChecksClean: true }), 'release', 'R');
    expect(asked).toBeDefined();
    const kept = await steward.release(
      asked as Extract<Handoff, { action: 'release' }>,
      commit,
      'batch/relx',
    );
    expect(kept).toMatchObject({ changed: true, why: expect.stringContaining('git worktree remove failed') });
    // Nothing of the lane lost: the worktree and its file, back on its branch at its tip.
    expect(readFileSync(join(lane, 'notes.txt'), 'utf8')).toBe('mine\n');
    expect((await git(lane, 'symbolic-ref', 'HEAD')).trim()).toBe('refs/heads/lane/relx/R');
    expect((await git(lane, 'rev-parse', 'refs/heads/lane/relx/R')).trim()).toBe(tip);
    // Kept for changes: looked at (a status) before it is asked for again, and not while dirty.
    const again = { releaseChecksClean: true, keptChanged: ['R'] };
    expect(handoff(await d.tick(again), 'release', 'R')).toBeUndefined();
    rmSync(join(lane, 'notes.txt'));
    const clean = handoff(await d.tick(again), 'release', 'R');
    expect(clean).toBeDefined();
    expect(
      await steward.release(clean as Extract<Handoff, { action: 'release' }>, commit, 'batch/relx'),
    ).toBeNull();
    expect(existsSync(lane)).toBe(false);
    expect(await git(d.repo.root, 'branch', '--list', 'lane/relx/R')).toBe('');
    expect(child(await d.tick(again), 'R').state).toBe('released');
  });

  it('leaves a lane someone moved to a branch of their own as it is, until it can go', async () => {
    const { d } = await oneChildLane('relm', 'M', 'm/**', check('ok', 'test -f m/x.txt'));
    const lane = realpathSync(d.lanePath('M'));
    writeFiles(lane, { 'm/x.txt': 'x\n' });
    const done = await exited(d, 'M');
    await git(lane, 'switch', '-q', '-c', 'mine');
    writeFiles(lane, { 'notes.txt': 'mine\n' });
    const steward = stewardOf(d);
    const asked = handoff(await d.tick({ releaseChecksClean: true }), 'release', 'M');
    const release = asked as Extract<Handoff, { action: 'release' }>;
    const commit = child(done, 'M').commit!;
    expect(await steward.release(release, commit, 'batch/relm')).toMatchObject({ changed: true });
    expect((await git(lane, 'symbolic-ref', 'HEAD')).trim()).toBe('refs/heads/mine');
    expect(await git(d.repo.root, 'branch', '--list', 'lane/relm/M')).not.toBe('');
    rmSync(join(lane, 'notes.txt'));
    expect(await steward.release(release, commit, 'batch/relm')).toBeNull();
    expect(existsSync(lane)).toBe(false);
    expect(await git(d.repo.root, 'branch', '--list', 'lane/relm/M')).toBe('');
    expect(await git(d.repo.root, 'branch', '--list', 'mine')).not.toBe('');
  });

  it('keeps a locked lane on its branch and says it is not for changes of its own', async () => {
    const { d } = await oneChildLane('rell', 'L', 'l/**', check('ok', 'test -f l/x.txt'));
    const lane = realpathSync(d.lanePath('L'));
    writeFiles(lane, { 'l/x.txt': 'x\n' });
    const done = await exited(d, 'L');
    await git(d.repo.root, 'worktree', 'lock', lane);
    const steward = stewardOf(d);
    const asked = handoff(await d.tick({ releaseChecksClean: true }), 'release', 'L');
    const kept = await steward.release(
      asked as Extract<Handoff, { action: 'release' }>,
      child(done, 'L').commit!,
      'batch/rell',
    );
    expect(kept).toMatchObject({ changed: false, why: expect.stringContaining('locked') });
    expect((await git(lane, 'symbolic-ref', 'HEAD')).trim()).toBe('refs/heads/lane/rell/L');
    // Refused for another reason: the coordinator does not ask again in this run.
    expect(
      handoff(await d.tick({ releaseChecksClean: true, releasing: ['L'] }), 'release', 'L'),
    ).toBeUndefined();
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

describe('lost lane', () => {
  it('parks a child whose worktree is gone, skips its dependents, and lets siblings finish', async () => {
    const repoDir = await makeRepo(FILES);
    const d = await startBatch(
      repoDir,
      `
batch: lost
children:
  - { id: L, goal: Write l, scope: ["l/**"], acceptance: [${check('ok', 'test -f l/out.txt')}] }
  - { id: S, goal: Write s, scope: ["s/**"], acceptance: [${check('ok', 'test -f s/out.txt')}] }
  - { id: L2, goal: Write l2, blocked_by: [L], scope: ["l2/**"], acceptance: [${check('ok', 'test -f l2/out.txt')}] }
  - { id: L3, goal: Write l3, blocked_by: [L2], scope: ["l3/**"], acceptance: [${check('ok', 'test -f l3/out.txt')}] }
`,
    );
    await d.provisionAll(await d.tick());
    writeFiles(d.lanePath('L'), { 'l/out.txt': 'work in progress\n' });
    await git(repoDir, 'worktree', 'remove', '--force', d.lanePath('L'));
    expect(existsSync(d.lanePath('L'))).toBe(false);

    const report = await d.tick();
    expect(child(report, 'L').state).toBe('needs_human');
    expect(child(report, 'L').reason).toMatch(/^batch_lane_lost: /);
    expect(child(report, 'L2')).toMatchObject({ state: 'skipped_blocked' });
    expect(child(report, 'L3')).toMatchObject({ state: 'skipped_blocked' });
    expect(report.batch_state).toBe('running');
    expect(handoff(report, 'executor', 'L')).toBeUndefined();

    writeFiles(d.lanePath('S'), { 's/out.txt': 's\n' });
    const after = await exited(d, 'S');
    expect(child(after, 'S').state).toBe('integrated');
    expect(after.batch_state).toBe('needs_human');
    expect(after.reason).toContain('L: batch_lane_lost');
  });
});

describe('an exit ended beside the loop (core/attempt-end.ts)', () => {
  it('is left running while it is ended, then taken as recorded: one exit, one QA run, one delivery', async () => {
    const { repoDir, d } = await oneChildLane('end', 'A', 'a.txt', check('ok', 'true'));
    writeFiles(d.lanePath('A'), { 'a.txt': 'a\n' });
    const head = await batchHead(d);
    const enrolled = child(readRecord(repoDir, 'end'), 'A');
    const planned = d.plan.children.find((c) => c.id === 'A')!;
    const exit = { code: 0, signal: null };

    expect(await endAttempt(d.ports(), laneFactsOf('end', enrolled), planned, exit)).toBe(true);
    const kernel = readKernel(repoDir, 'end', 'A');
    expect(kernel).toMatchObject({ lifecycle: 'done', next_obligation: 'none' });
    expect(kernel.attempts).toHaveLength(1);
    expect(kernel.qa_runs).toHaveLength(1);
    // The delivery is on the lane branch before the kernel says done.
    const tip = (await git(repoDir, 'rev-parse', 'lane/end/A')).trim();
    expect((await git(repoDir, 'rev-parse', `${tip}^`)).trim()).toBe(enrolled.lane!.base_head);
    // Not handed in yet: the tick leaves the child as it is.
    const held = await d.tick({ ending: ['A'] });
    expect(child(held, 'A').state).toBe('enrolled');
    expect(await batchHead(d)).toBe(head);

    const report = await d.tick({ exited: [{ task_id: 'A', ...exit, recorded: true }] });
    expect(child(report, 'A').state).toBe('integrated');
    expect(child(report, 'A').lane!.lane_commit).toBe(tip);
    expect(readKernel(repoDir, 'end', 'A')).toEqual(kernel); // nothing recorded twice
    const events = (d.ports().store as BatchFiles).journalFile.read().entries;
    for (const name of ['executor-exited', 'qa-passed', 'integrated'])
      expect(
        events.filter((e) => e.event === name && e.task === 'A'),
        name,
      ).toHaveLength(1);
  });

  it('does nothing for a lane that is not on its branch any more (the tick parks it)', async () => {
    const { repoDir, d } = await oneChildLane('end3', 'A', 'a.txt', check('ok', 'true'));
    writeFiles(d.lanePath('A'), { 'a.txt': 'a\n' });
    await git(d.lanePath('A'), 'switch', '-q', '-c', 'elsewhere');
    const enrolled = child(readRecord(repoDir, 'end3'), 'A');
    const planned = d.plan.children.find((c) => c.id === 'A')!;
    const before = readKernel(repoDir, 'end3', 'A');
    const tip = (await git(repoDir, 'rev-parse', 'lane/end3/A')).trim();
    expect(
      await endAttempt(d.ports(), laneFactsOf('end3', enrolled), planned, { code: 0, signal: null }),
    ).toBe(false);
    expect(readKernel(repoDir, 'end3', 'A')).toEqual(before);
    expect((await git(repoDir, 'rev-parse', 'lane/end3/A')).trim()).toBe(tip); // no delivery made
  });

  it('does nothing for a kernel that is not this run’s (the tick decides, as for any exit)', async () => {
    const { repoDir, d } = await oneChildLane('end2', 'A', 'a.txt', check('ok', 'true'));
    const enrolled = child(readRecord(repoDir, 'end2'), 'A');
    const planned = d.plan.children.find((c) => c.id === 'A')!;
    const before = readKernel(repoDir, 'end2', 'A');
    const facts = { ...laneFactsOf('end2', enrolled), runId: 'run-other' };
    expect(await endAttempt(d.ports(), facts, planned, { code: 0, signal: null })).toBe(false);
    expect(readKernel(repoDir, 'end2', 'A')).toEqual(before);
  });
});
