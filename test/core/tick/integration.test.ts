import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startBatch } from '../../helpers/batch.js';
import { git, makeRepo } from '../../helpers/repo.js';
import {
  handCommit,
  holdThenApprove,
  rev,
  parentsOf,
  trailersOf,
  changedIn,
  worktreePaths,
  journalOf,
  recordOf,
  childOf,
  handoffs,
  work,
  provision,
  playUntilStopped,
  grep,
} from '../../helpers/tick-git.js';
// The core runner driven tick by tick against real git repositories: the test plays the
// steward (git worktree add/remove) and the executor (writes files in a lane, then says
// the executor exited). Never mocks git; never commits in the user's main worktree.
// The CLI tests need `npm run -s build` first.

describe('a six-child batch, tick by tick', () => {
  const FILES: Record<string, Record<string, string>> = {
    T1: { 'a/one.txt': 'T1 done\n' },
    T2: { 'b/two.txt': 'T2 done\n' },
    T3: { 'c/three.txt': 'T3 done\n' },
    T4: { 'd/four.txt': 'T4 done\n' },
    T5: { 'e/five.txt': 'T5 done\n' },
    T6: { 'f/six.txt': 'T6 done\n' },
  };
  const DEPS: Record<string, string[]> = {
    T1: [],
    T2: [],
    T3: [],
    T4: ['T1', 'T2'],
    T5: ['T3'],
    T6: ['T4', 'T5'],
  };
  // Each child's check reads its own file and the files of its dependencies: a lane that
  // did not start from the batch head (with the dependencies integrated) fails QA.
  const PLAN = `
batch: six
max_parallel: 3
children:
  - id: T1
    goal: write a/one.txt
    scope: ["a/**"]
    acceptance: [{ id: A1, run: "${grep('T1 done', 'a/one.txt')}" }]
  - id: T2
    goal: write b/two.txt
    scope: ["b/**"]
    acceptance: [{ id: A1, run: "${grep('T2 done', 'b/two.txt')}" }]
  - id: T3
    goal: write c/three.txt
    scope: ["c/**"]
    acceptance: [{ id: A1, run: "${grep('T3 done', 'c/three.txt')}" }]
  - id: T4
    goal: write d/four.txt
    blocked_by: [T1, T2]
    scope: ["d/**"]
    acceptance:
      - { id: A1, run: "${grep('T4 done', 'd/four.txt')}" }
      - { id: A2, run: "${grep('T1 done', 'a/one.txt')} && ${grep('T2 done', 'b/two.txt')}" }
  - id: T5
    goal: write e/five.txt
    blocked_by: [T3]
    scope: ["e/**"]
    acceptance: [{ id: A1, run: "${grep('T5 done', 'e/five.txt')} && ${grep('T3 done', 'c/three.txt')}" }]
  - id: T6
    goal: write f/six.txt
    blocked_by: [T4, T5]
    scope: ["f/**"]
    acceptance: [{ id: A1, run: "${grep('T6 done', 'f/six.txt')} && ${grep('T4 done', 'd/four.txt')} && ${grep('T5 done', 'e/five.txt')}" }]
`;

  it(
    'integrates every child in dependency order, with trailers, the expected tree, and the main worktree untouched',
    { timeout: 60_000 },
    async () => {
      const root = await makeRepo({ 'README.md': '# six\n', 'notes.txt': 'original\n' });
      // A real check that lanes never touches the user's worktree: dirty it first.
      writeFileSync(join(root, 'notes.txt'), 'edited by the user, not committed\n');
      writeFileSync(join(root, 'scratch.txt'), 'untracked\n');
      const mainBefore = {
        status: await git(root, 'status', '--porcelain', '--untracked-files=all'),
        head: await rev(root, 'HEAD'),
        branch: (await git(root, 'symbolic-ref', '--short', 'HEAD')).trim(),
      };
      expect(mainBefore.status).toContain(' M notes.txt');
      expect(mainBefore.status).toContain('?? scratch.txt');

      const d = await startBatch(root, PLAN);
      const base = recordOf(d).base_head;
      expect(base).toBe(mainBefore.head);

      let r = await d.tick();
      expect(r.batch_state).toBe('running');
      expect(handoffs(r, 'provision').map((h) => h.task_id)).toEqual(['T1', 'T2', 'T3']);
      for (const h of handoffs(r, 'provision'))
        expect(h).toEqual({
          action: 'provision',
          task_id: h.task_id,
          lane_branch: `lane/six/${h.task_id}`,
          base_head: base,
          machine: 'local',
        });
      r = await provision(d, r);
      expect(handoffs(r, 'executor').map((h) => h.task_id)).toEqual(['T1', 'T2', 'T3']);
      expect(r.children.filter((c) => c.state === 'enrolled').length).toBe(3);

      const played = await playUntilStopped(d, r, FILES);
      r = played.report;
      expect(r.batch_state).toBe('completed');
      expect(played.waves).toEqual([['T1', 'T2', 'T3'], ['T4', 'T5'], ['T6']]);

      // Release what is left, then a tick on the completed batch records the releases.
      for (const h of handoffs(r, 'release')) await d.release(h.task_id);
      r = await d.tick();
      expect(r.batch_state).toBe('completed');
      expect(r.handoffs).toEqual([]);
      const record = recordOf(d);
      expect(record.batch_state).toBe('completed');
      expect(record.children.map((c) => c.state)).toEqual(Array(6).fill('released'));

      // Exactly six commits over base, listed in the record in branch order.
      const tip = await rev(root, 'refs/heads/batch/six');
      expect((await git(root, 'rev-list', '--count', `${base}..batch/six`)).trim()).toBe('6');
      const onBranch = (await git(root, 'rev-list', '--reverse', '--first-parent', `${base}..batch/six`))
        .trim()
        .split('\n');
      expect(onBranch).toEqual(record.commits);
      expect(onBranch.at(-1)).toBe(tip);

      const position = new Map<string, number>();
      for (const child of record.children) position.set(child.task_id, onBranch.indexOf(child.commit!));
      for (const [id, deps] of Object.entries(DEPS))
        for (const dep of deps)
          expect(position.get(id)!, `${id} after ${dep}`).toBeGreaterThan(position.get(dep)!);

      for (const child of record.children) {
        const lane = child.lane!;
        const commit = child.commit!;
        // Linear history: each integration sits on the previous one.
        expect(await parentsOf(root, commit)).toEqual([
          position.get(child.task_id)! === 0 ? base : onBranch[position.get(child.task_id)! - 1],
        ]);
        expect(await trailersOf(root, commit)).toEqual({
          'Lanes-Batch': 'six',
          'Lanes-Task': child.task_id,
          'Lanes-Run': lane.run_id,
          'Lanes-Base': lane.base_head,
          'Lanes-Lane-Commit': lane.lane_commit,
        });
        expect(await changedIn(root, commit)).toEqual(Object.keys(FILES[child.task_id]!));
        // The lane commit: one parent, the lane base; the lanes trailers; only the child's paths.
        expect(await parentsOf(root, lane.lane_commit!)).toEqual([lane.base_head]);
        expect(await trailersOf(root, lane.lane_commit!)).toEqual({
          'Lanes-Batch': 'six',
          'Lanes-Task': child.task_id,
          'Lanes-Run': lane.run_id,
          'Lanes-Base': lane.base_head,
        });
        expect(await changedIn(root, lane.lane_commit!)).toEqual(Object.keys(FILES[child.task_id]!));
        expect(await rev(root, `refs/heads/${lane.branch}`)).toBe(lane.lane_commit);
        // A lane starts at the batch head of its moment: every dependency is already in it.
        for (const dep of DEPS[child.task_id]!)
          await git(root, 'merge-base', '--is-ancestor', childOf(record, dep).commit!, lane.base_head);
        expect(existsSync(lane.path)).toBe(false);
      }

      // The batch branch's tree: the base files as committed plus each child's file.
      const expected: Record<string, string> = { 'README.md': '# six\n', 'notes.txt': 'original\n' };
      for (const files of Object.values(FILES)) Object.assign(expected, files);
      const listed = (await git(root, 'ls-tree', '-r', '--name-only', 'batch/six')).trim().split('\n').sort();
      expect(listed).toEqual(Object.keys(expected).sort());
      for (const [path, text] of Object.entries(expected))
        expect(`${await git(root, 'show', `batch/six:${path}`)}\n`).toBe(text);

      // The user's worktree: same HEAD, same branch, same status, same bytes.
      expect(await git(root, 'status', '--porcelain', '--untracked-files=all')).toBe(mainBefore.status);
      expect(await rev(root, 'HEAD')).toBe(mainBefore.head);
      expect((await git(root, 'symbolic-ref', '--short', 'HEAD')).trim()).toBe(mainBefore.branch);
      expect(readFileSync(join(root, 'notes.txt'), 'utf8')).toBe('edited by the user, not committed\n');
      expect(await worktreePaths(root)).toEqual([root]);

      const events = journalOf(d).map((e) => e.event);
      expect(events.filter((e) => e === 'integrated').length).toBe(6);
      expect(events.filter((e) => e === 'released').length).toBe(6);
      expect(events.filter((e) => e === 'batch-completed').length).toBe(1);
    },
  );
});

// ---------------------------------------------------------------- 2. integration conflict

describe('an integration conflict', () => {
  const LINES = 'one\ntwo\nthree\nfour\nfive\n';
  const PLAN = `
batch: clash
max_parallel: 2
children:
  - id: T1
    goal: rewrite line two of shared.txt
    scope: ["shared.txt"]
    acceptance: [{ id: A1, run: "grep -qx 'two by T1' shared.txt" }]
  - id: T2
    goal: write b/two.txt
    scope: ["b/**"]
    acceptance: [{ id: A1, run: "grep -qx T2 b/two.txt" }]
  - id: T3
    goal: write c/three.txt after T1
    blocked_by: [T1]
    scope: ["c/**"]
    acceptance: [{ id: A1, run: "grep -qx T3 c/three.txt" }]
`;

  it('adopts the hand commit, parks only the conflicting child, integrates its sibling and skips its dependents', async () => {
    const root = await makeRepo({ 'README.md': '# clash\n', 'shared.txt': LINES });
    const d = await startBatch(root, PLAN);
    const base = recordOf(d).base_head;
    let r = await d.tick();
    expect(handoffs(r, 'provision').map((h) => h.task_id)).toEqual(['T1', 'T2']);
    r = await provision(d, r);
    const t1 = work(d.lanePath('T1'), 'T1', { 'shared.txt': LINES.replace('two\n', 'two by T1\n') });
    const t2 = work(d.lanePath('T2'), 'T2', { 'b/two.txt': 'T2\n' });

    // While both lanes are in flight, somebody commits the same line on the batch branch.
    const hand = await handCommit(
      root,
      'batch/clash',
      { 'shared.txt': LINES.replace('two\n', 'two by hand\n') },
      'hand edit\n',
    );
    r = await holdThenApprove(d, { exited: [t1, t2] });

    const record = recordOf(d);
    expect(record.adopted_heads).toEqual([{ from: base, to: hand }]);
    const journal = journalOf(d);
    expect(journal.some((e) => e.event === 'head-adopted' && e.from === base && e.to === hand)).toBe(true);
    expect(journal.filter((e) => e.event === 'integration-conflict')).toEqual([
      expect.objectContaining({ task: 'T1', paths: ['shared.txt'] }),
    ]);

    const t1Child = childOf(record, 'T1');
    expect(t1Child.state).toBe('needs_human');
    expect(t1Child.reason).toBe('batch_integration_conflict: shared.txt');
    expect(t1Child.commit).toBeNull();
    expect(t1Child.lane!.lane_commit).not.toBeNull();
    expect(await changedIn(root, t1Child.lane!.lane_commit!)).toEqual(['shared.txt']);

    const t2Child = childOf(record, 'T2');
    expect(t2Child.state).toBe('integrated');
    expect(childOf(record, 'T3')).toMatchObject({
      state: 'skipped_blocked',
      reason: 'blocked by parked child T1',
    });

    // The branch holds the hand commit and T2's integration on it, and nothing of T1.
    const tip = await rev(root, 'refs/heads/batch/clash');
    expect(tip).toBe(t2Child.commit);
    expect(record.commits).toEqual([t2Child.commit]);
    expect(await parentsOf(root, tip)).toEqual([hand]);
    expect(await git(root, 'show', 'batch/clash:shared.txt')).toBe(
      LINES.replace('two\n', 'two by hand\n').trimEnd(),
    );
    expect(await changedIn(root, tip)).toEqual(['b/two.txt']);

    expect(r.batch_state).toBe('needs_human');
    expect(record.batch_state).toBe('needs_human');
    expect(r.reason).toContain('T1: batch_integration_conflict:');
    // The parked lane is kept, with its work; the integrated one may be released.
    expect(existsSync(join(d.lanePath('T1'), 'shared.txt'))).toBe(true);
    expect(handoffs(r, 'release').map((h) => h.task_id)).toEqual(['T2']);
    expect(handoffs(r, 'provision')).toEqual([]);
  });
});

// ---------------------------------------------------------------- 3. re-verification
