import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { endAttempt, laneFactsOf } from '../../../src/core/steps/attempt-end.js';
import { BatchFiles } from '../../../src/store/batch-files.js';
import { startBatch, writeFiles } from '../../helpers/batch.js';
import { git, makeRepo } from '../../helpers/repo.js';
import {
  FILES,
  readRecord,
  readKernel,
  child,
  handoff,
  oneChildLane,
  exited,
  batchHead,
  check,
} from '../../helpers/tick-lanes.js';
// Lanes through the core runner with real git: admission refusals from real worktrees,
// the QA guards, the QA failure limit and the resume after it, human review, and a
// lane that disappears. The test plays steward (git worktree add/remove) and executor
// (writes files into the lane, then reports the exit).

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
