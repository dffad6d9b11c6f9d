import { realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startBatch, writeFiles } from '../../helpers/batch.js';
import { git, makeRepo, tempDir } from '../../helpers/repo.js';
import {
  FILES,
  readRecord,
  child,
  handoff,
  provisionTasks,
  exited,
  batchHead,
  expectRefused,
  check,
} from '../../helpers/tick-lanes.js';
// Lanes through the core runner with real git: admission refusals from real worktrees,
// the QA guards, the QA failure limit and the resume after it, human review, and a
// lane that disappears. The test plays steward (git worktree add/remove) and executor
// (writes files into the lane, then reports the exit).

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
