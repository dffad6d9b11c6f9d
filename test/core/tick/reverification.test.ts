import { readdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BatchFiles } from '../../../src/store/batch-files.js';
import { laneQaLog } from '../../../src/tui/lane-views.js';
import { startBatch } from '../../helpers/batch.js';
import { git, makeRepo } from '../../helpers/repo.js';
import {
  handCommit,
  holdThenApprove,
  rev,
  parentsOf,
  worktreePaths,
  journalOf,
  recordOf,
  childOf,
  work,
  provision,
} from '../../helpers/tick-git.js';
// The core runner driven tick by tick against real git repositories: the test plays the
// steward (git worktree add/remove) and the executor (writes files in a lane, then says
// the executor exited). Never mocks git; never commits in the user's main worktree.
// The CLI tests need `npm run -s build` first.

describe('re-verification of a clean merge that differs from the lane change (DESIGN §6)', () => {
  const TEN = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';
  const planFor = (check: string) => `
batch: recheck
max_parallel: 1
children:
  - id: T1
    goal: rewrite the first line of x.txt
    scope: ["x.txt"]
    acceptance: [{ id: A1, run: "${check}" }]
`;

  async function inFlight(check: string, handX: string) {
    const root = await makeRepo({ 'README.md': '# recheck\n', 'x.txt': TEN });
    const d = await startBatch(root, planFor(check));
    const base = recordOf(d).base_head;
    let r = await d.tick();
    r = await provision(d, r);
    const exit = work(d.lanePath('T1'), 'T1', { 'x.txt': TEN.replace('line 1\n', 'first by T1\n') });
    const hand = await handCommit(root, 'batch/recheck', { 'x.txt': handX }, 'hand edit of x.txt\n');
    r = await holdThenApprove(d, { exited: [exit] });
    return { root, d, base, hand, r };
  }

  it('A: the check passes on the merged tree → integrated, re-verified in a scratch worktree', async () => {
    const { root, d, base, hand, r } = await inFlight(
      "grep -qx 'first by T1' x.txt",
      TEN.replace('line 10\n', 'last by hand\n'),
    );
    const record = recordOf(d);
    const child = childOf(record, 'T1');
    expect(child.state).toBe('integrated');
    expect(r.batch_state).toBe('completed');
    expect(record.adopted_heads).toEqual([{ from: base, to: hand }]);
    const tip = await rev(root, 'refs/heads/batch/recheck');
    expect(tip).toBe(child.commit);
    expect(await parentsOf(root, tip)).toEqual([hand]);
    expect(await git(root, 'show', 'batch/recheck:x.txt')).toBe(
      TEN.replace('line 1\n', 'first by T1\n').replace('line 10\n', 'last by hand\n').trimEnd(),
    );
    const journal = journalOf(d);
    expect(
      journal.some((e) => e.event === 'qa-passed' && e.task === 'T1' && e.integration_check === true),
    ).toBe(true);
    expect(journal.find((e) => e.event === 'integrated' && e.task === 'T1')).toMatchObject({
      reverified: true,
    });
    // The scratch worktree is gone again.
    expect(await worktreePaths(root)).toEqual([root, realpathSync(d.lanePath('T1'))]);
  });

  it('C: the scratch checkout gets copy_files and the setup commands, like a lane', async () => {
    const root = await makeRepo({ 'README.md': '# recheck\n', 'x.txt': TEN, '.gitignore': '.env\n.ready\n' });
    writeFileSync(join(root, '.env'), 'SECRET=1\n'); // ignored: only copy_files brings it
    writeFileSync(join(root, 'lanes.config.json'), '{"copy_files": [".env"], "setup": ["touch .ready"]}\n');
    const d = await startBatch(
      root,
      planFor("test -f .env && test -f .ready && grep -qx 'first by T1' x.txt"),
    );
    let r = await provision(d, await d.tick());
    // (the test plays the steward: it readies the lane itself)
    const exit = work(d.lanePath('T1'), 'T1', {
      'x.txt': TEN.replace('line 1\n', 'first by T1\n'),
      '.env': 'SECRET=1\n',
      '.ready': '',
    });
    await handCommit(
      root,
      'batch/recheck',
      { 'x.txt': TEN.replace('line 10\n', 'last by hand\n') },
      'hand\n',
    );
    r = await holdThenApprove(d, { exited: [exit] });
    expect(childOf(recordOf(d), 'T1').state).toBe('integrated');
    expect(r.batch_state).toBe('completed');
    const logs = readdirSync(join(d.repo.stateDir, 'batches', 'recheck', 'logs', 'T1'));
    expect(logs.filter((f) => /^integration-[0-9a-f]{12}-(setup-1|T1-A1)\.log$/.test(f))).toHaveLength(2);
  });

  it('B: the check fails on the merged tree → parked with batch_integration_check_failed, branch unmoved', async () => {
    const check = "grep -qx 'first by T1' x.txt && test $(wc -l < x.txt) -eq 10";
    const { root, d, hand, r } = await inFlight(check, `${TEN}line 11 by hand\n`);
    const record = recordOf(d);
    const child = childOf(record, 'T1');
    // In the lane the check passed (QA, then the lane commit); only the merged tree fails it.
    expect(child.lane!.lane_commit).not.toBeNull();
    expect(child.state).toBe('needs_human');
    // The reason names where the re-verification's output is kept (the child's logs).
    expect(child.reason).toMatch(
      /^batch_integration_check_failed: T1:A1 \(output: .*\/logs\/T1\/integration-[0-9a-f]{12}-\*\.log\)$/,
    );
    const logDir = join(d.repo.stateDir, 'batches', 'recheck', 'logs', 'T1');
    const kept = readdirSync(logDir).filter((f) => f.startsWith('integration-'));
    expect(kept).toHaveLength(1);
    expect(kept[0]).toMatch(/-T1-A1\.log$/);
    // `l` shows it.
    const shown = laneQaLog(d.ports().store as BatchFiles, 'T1');
    expect(shown).toContain('── re-verification of the merged tree');
    expect(shown).toContain(kept[0]);
    expect(await rev(root, 'refs/heads/batch/recheck')).toBe(hand);
    expect(record.commits).toEqual([]);
    expect(r.batch_state).toBe('needs_human');
    const journal = journalOf(d);
    expect(
      journal.some((e) => e.event === 'qa-passed' && e.task === 'T1' && e.integration_check === undefined),
    ).toBe(true);
    expect(journal.some((e) => e.event === 'qa-failed' && e.integration_check === true)).toBe(true);
    expect(journal.some((e) => e.event === 'integrated')).toBe(false);
    expect(await worktreePaths(root)).toEqual([root, realpathSync(d.lanePath('T1'))]);
  });
});

// ---------------------------------------------------------------- 4. lineage
