import { existsSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Steward } from '../../../src/coordinator/lanes/steward.js';
import { DEFAULT_CONFIG } from '../../../src/core/settings/config.js';
import { LaneWorktrees } from '../../../src/git/ports/lane-worktrees.js';
import type { Handoff } from '../../../src/core/records/report.js';
import { writeFiles } from '../../helpers/batch.js';
import type { Driver } from '../../helpers/batch.js';
import { git, tempDir } from '../../helpers/repo.js';
import { child, handoff, oneChildLane, exited, check } from '../../helpers/tick-lanes.js';
// Lanes through the core runner with real git: admission refusals from real worktrees,
// the QA guards, the QA failure limit and the resume after it, human review, and a
// lane that disappears. The test plays steward (git worktree add/remove) and executor
// (writes files into the lane, then reports the exit).

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
