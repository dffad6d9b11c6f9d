import { existsSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { LanesError } from '../../src/core/basics/errors.js';
import type { Report } from '../../src/core/records/report.js';
import type { BatchRecord } from '../../src/core/records/record.js';
import { batchPaths } from '../../src/store/state-dir.js';
import type { BatchFiles } from '../../src/store/batch-files.js';
import { laneQaLog } from '../../src/tui/lane-views.js';
import { startBatch, writeFiles } from '../helpers/batch.js';
import type { Driver } from '../helpers/batch.js';
import { git, makeRepo, runCli, snapshotTree, tempDir } from '../helpers/repo.js';

// The core runner driven tick by tick against real git repositories: the test plays the
// steward (git worktree add/remove) and the executor (writes files in a lane, then says
// the executor exited). Never mocks git; never commits in the user's main worktree.
// The CLI tests need `npm run -s build` first.

// ---------------------------------------------------------------- helpers

/** git with an environment and stdin (the shared helper has neither); stdout trimmed. */
async function gitIo(
  cwd: string,
  args: string[],
  options: { env?: Record<string, string>; input?: string } = {},
) {
  const result = await execa('git', args, {
    cwd,
    env: { GIT_CONFIG_NOSYSTEM: '1', ...options.env },
    ...(options.input !== undefined ? { input: options.input } : {}),
  });
  return String(result.stdout).trim();
}

/**
 * A commit made "by hand" on `branch` with plumbing only (a private index, commit-tree,
 * a compare-and-swap update-ref): the user's main worktree and index are never touched.
 */
async function handCommit(
  root: string,
  branch: string,
  files: Record<string, string>,
  message: string,
): Promise<string> {
  const env = { GIT_INDEX_FILE: join(tempDir('lanes-index-'), 'index') };
  const parent = await gitIo(root, ['rev-parse', '--verify', `refs/heads/${branch}^{commit}`]);
  await gitIo(root, ['read-tree', parent], { env });
  for (const [path, text] of Object.entries(files)) {
    const blob = await gitIo(root, ['hash-object', '-w', '--stdin'], { input: text });
    await gitIo(root, ['update-index', '--add', '--cacheinfo', `100644,${blob},${path}`], { env });
  }
  const tree = await gitIo(root, ['write-tree'], { env });
  const commit = await gitIo(root, ['commit-tree', tree, '-p', parent, '-F', '-'], { input: message });
  await gitIo(root, ['update-ref', `refs/heads/${branch}`, commit, parent]);
  return commit;
}

async function rev(root: string, ref: string): Promise<string> {
  return (await git(root, 'rev-parse', '--verify', `${ref}^{commit}`)).trim();
}

async function parentsOf(root: string, sha: string): Promise<string[]> {
  return (await git(root, 'rev-list', '--parents', '-n', '1', sha)).trim().split(' ').slice(1);
}

async function trailersOf(root: string, sha: string): Promise<Record<string, string>> {
  const out = await git(root, 'log', '-1', '--format=%(trailers:only,unfold)', sha);
  const trailers: Record<string, string> = {};
  for (const line of out.split('\n')) {
    const m = /^([A-Za-z0-9-]+):\s*(.*)$/.exec(line);
    if (m) trailers[m[1]!] = m[2]!.trim();
  }
  return trailers;
}

async function changedIn(root: string, sha: string): Promise<string[]> {
  return (await git(root, 'diff-tree', '--no-commit-id', '--name-only', '-r', sha))
    .split('\n')
    .filter(Boolean)
    .sort();
}

async function worktreePaths(root: string): Promise<string[]> {
  return (await git(root, 'worktree', 'list', '--porcelain'))
    .split('\n')
    .filter((l) => l.startsWith('worktree '))
    .map((l) => l.slice('worktree '.length));
}

type Entry = Record<string, unknown> & { event: string; task?: string };

function journalOf(d: Driver): Entry[] {
  const text = readFileSync(batchPaths(d.repo.stateDir, d.plan.batch).journal, 'utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Entry);
}

function recordOf(d: Driver): BatchRecord {
  return d.ports().store.readRecord();
}

function childOf(r: { children: BatchRecord['children'] }, id: string) {
  const c = r.children.find((x) => x.task_id === id);
  if (!c) throw new Error(`no child ${id}`);
  return c;
}

function handoffs(r: Report, action: 'provision' | 'executor' | 'release') {
  return r.handoffs.filter((h) => h.action === action);
}

/** Plays the executor: writes the child's files in its lane and returns the exit notice. */
function work(lanePath: string, taskId: string, files: Record<string, string>) {
  writeFiles(lanePath, files);
  return { task_id: taskId, code: 0, signal: null };
}

/** Offers every provision handoff of `r` (worktree add) and returns the next report. */
async function provision(d: Driver, r: Report): Promise<Report> {
  expect(handoffs(r, 'provision').length).toBeGreaterThan(0);
  const next = await d.provisionAll(r);
  expect(next.lane_refusals).toEqual([]);
  return next;
}

/**
 * Steward + executor loop until the batch leaves `running`: release integrated lanes,
 * do the work of every lane waiting for its implementation, provision startable children.
 * Records, for each tick, which children were integrated by it.
 */
async function playUntilStopped(
  d: Driver,
  first: Report,
  files: Record<string, Record<string, string>>,
): Promise<{ report: Report; waves: string[][] }> {
  let r = first;
  const waves: string[][] = [];
  for (let turn = 0; turn < 30 && r.batch_state === 'running'; turn++) {
    for (const h of handoffs(r, 'release')) await d.release(h.task_id);
    const exited = [];
    for (const h of r.handoffs)
      if (h.action === 'executor' && h.next_obligation === 'implement')
        exited.push(work(h.lane_path, h.task_id, files[h.task_id]!));
    const before = new Set(r.children.filter((c) => c.commit).map((c) => c.task_id));
    if (exited.length > 0) r = await d.tick({ exited });
    else if (handoffs(r, 'provision').length > 0) r = await provision(d, r);
    else r = await d.tick();
    const now = r.children.filter((c) => c.commit && !before.has(c.task_id)).map((c) => c.task_id);
    if (now.length) waves.push(now);
  }
  return { report: r, waves };
}

function grep(line: string, path: string): string {
  return `grep -qx '${line}' ${path}`;
}

// ---------------------------------------------------------------- 1. a full batch

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
    r = await d.tick({ exited: [t1, t2] });

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
    r = await d.tick({ exited: [exit] });
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
    r = await d.tick({ exited: [exit] });
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
    expect(r.batch_state).toBe('running');
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

describe('the CLI: start --no-run, tick, status', () => {
  const planText = (batch: string) => `
batch: ${batch}
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
`;

  it(
    'start --no-run prints the first report; tick and status print one JSON document; bad --offer exits 2 writing nothing',
    { timeout: 60_000 },
    async () => {
      const root = await makeRepo({ 'README.md': '# cli\n' });
      const base = await rev(root, 'HEAD');
      const dir = tempDir();
      writeFileSync(join(dir, 'human.yaml'), planText('human'));
      writeFileSync(join(dir, 'machine.yaml'), planText('machine'));

      // Text report.
      const text = await runCli(['-C', root, 'start', join(dir, 'human.yaml'), '--yes', '--no-run']);
      expect(text.exitCode, text.stderr).toBe(0);
      expect(text.stdout).toContain('prepared');
      expect(text.stdout).toContain(`→ provision T1: lane/human/T1 at ${base.slice(0, 12)}`);
      expect(text.stdout).toContain(`→ provision T2: lane/human/T2 at ${base.slice(0, 12)}`);

      // JSON report: one document, handoffs with exactly the DESIGN §4 keys.
      const json = await runCli([
        '-C',
        root,
        'start',
        join(dir, 'machine.yaml'),
        '--yes',
        '--no-run',
        '--json',
      ]);
      expect(json.exitCode, json.stderr).toBe(0);
      expect(json.stdout.trim().split('\n')).toHaveLength(1);
      const first = JSON.parse(json.stdout) as Report;
      expect(first.batch_state).toBe('prepared');
      expect(first.handoffs).toHaveLength(2);
      for (const h of first.handoffs) {
        expect(Object.keys(h).sort()).toEqual(['action', 'base_head', 'lane_branch', 'task_id']);
        expect(h).toMatchObject({
          action: 'provision',
          lane_branch: `lane/machine/${h.task_id}`,
          base_head: base,
        });
      }
      expect(await rev(root, 'refs/heads/batch/machine')).toBe(base);

      const status = await runCli(['-C', root, 'status', 'machine', '--json']);
      expect(status.exitCode, status.stderr).toBe(0);
      expect(status.stdout.trim().split('\n')).toHaveLength(1);
      const both = JSON.parse(status.stdout) as { record: BatchRecord; report: Report };
      expect(Object.keys(both).sort()).toEqual(['record', 'report']);
      expect(both.record.batch_state).toBe('prepared');
      expect(both.record.batch_id).toBe('machine');
      expect(both.report).toEqual(first);

      // Bad --offer values: exit 2, the state dir byte-identical.
      const stateDir = join(root, '.git', 'lanes');
      const before = snapshotTree(stateDir);
      const lane = join(tempDir(), 'T1');
      for (const offer of ['T1=relative/lane', 'T1', `T1=/${'x'.repeat(5000)}`]) {
        const bad = await runCli(['-C', root, 'tick', 'machine', '--offer', offer, '--json']);
        expect(bad.exitCode, `--offer ${offer.slice(0, 40)}`).toBe(2);
        expect(bad.stdout).toBe('');
        expect(bad.stderr).toContain('--offer');
        expect(snapshotTree(stateDir)).toEqual(before);
      }

      // A real tick through the CLI: exactly one JSON document, the batch now running.
      await git(root, 'worktree', 'add', '-q', '-b', 'lane/machine/T1', lane, base);
      const ticked = await runCli(['-C', root, 'tick', 'machine', '--offer', `T1=${lane}`, '--json']);
      expect(ticked.exitCode, ticked.stderr).toBe(0);
      expect(ticked.stdout.trim().split('\n')).toHaveLength(1);
      const report = JSON.parse(ticked.stdout) as Report;
      expect(report.batch_state).toBe('running');
      expect(report.lane_refusals).toEqual([]);
      const executor = report.handoffs.find((h) => h.action === 'executor');
      expect(executor).toBeDefined();
      expect(Object.keys(executor!).sort()).toEqual([
        'action',
        'lane_branch',
        'lane_path',
        'next_obligation',
        'run_id',
        'task_id',
      ]);
      expect(executor).toMatchObject({
        task_id: 'T1',
        lane_path: realpathSync(lane),
        next_obligation: 'implement',
      });
      expect(report.handoffs.filter((h) => h.action === 'provision').map((h) => h.task_id)).toEqual(['T2']);

      writeFiles(lane, { 'a/one.txt': 'T1\n' });
      const exited = await runCli(['-C', root, 'tick', 'machine', '--exited', 'T1=0', '--json']);
      expect(exited.exitCode, exited.stderr).toBe(0);
      const after = JSON.parse(exited.stdout) as Report;
      expect(childOf(after, 'T1').state).toBe('integrated');
      expect(after.handoffs.filter((h) => h.action === 'release').map((h) => h.task_id)).toEqual(['T1']);

      const final = JSON.parse((await runCli(['-C', root, 'status', 'machine', '--json'])).stdout) as {
        record: BatchRecord;
        report: Report;
      };
      expect(final.record.batch_state).toBe('running');
      expect(final.report).toEqual(after);
      expect(await rev(root, 'refs/heads/batch/machine')).toBe(childOf(final.record, 'T1').commit);
    },
  );
});
