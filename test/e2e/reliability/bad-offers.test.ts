import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Report } from '../../../src/core/records/report.js';
import { git, snapshotTree, tempDir } from '../../helpers/repo.js';
import { lanesInProcess, leanRepo, recordPath, stateDir } from './support.js';

// Offered lane paths (docs/RELIABILITY.md), through `lanes tick <batch> --offer
// <child>=<path> --json`: each of the seven refusal reasons of DESIGN §4 step 6, and the
// paths a user could hand in by mistake (another repository, a subdirectory of a lane, the
// coordinator itself, a symbolic link, a path that does not exist). A refusal is reported
// in the tick's report — the command exits 0, as a tick does whenever it prints a report
// (DESIGN §9) — and writes nothing: the batch record and the lane kernels stay byte for byte
// the same (the report file and the journal do record the tick). Paths the command line
// itself rejects (relative, NUL, 5000 characters) exit 2: bad-args.test.ts.

const PLAN = `batch: adm
budget: { qa_failure_limit: 1 }
children:
  - { id: A, goal: g, scope: [a], acceptance: [{ id: ok, run: ["test", "-f", "a/x"] }] }
  - { id: B, goal: g, scope: [b], acceptance: [{ id: ok, run: ["test", "-f", "b/x"] }] }
  - { id: D, goal: g, scope: [d], acceptance: [{ id: ok, run: ["test", "-f", "d/x"] }] }
  - { id: C, goal: g, blocked_by: [A], scope: [c], acceptance: [{ id: ok, run: ["true"] }] }
`;

let repo: string;
let lanes: string;
let base: string;

async function tick(...args: string[]): Promise<Report> {
  const r = await lanesInProcess(['-C', repo, 'tick', 'adm', '--json', ...args]);
  expect(r.exitCode, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Report;
}

/** What a refusal must not touch: the record and every lane kernel. */
function stateSnapshot() {
  return {
    record: readFileSync(recordPath(repo, 'adm'), 'utf8'),
    tasks: snapshotTree(join(stateDir(repo), 'batches', 'adm', 'tasks')),
  };
}

async function worktree(name: string, branch: string, at = base): Promise<string> {
  const path = join(lanes, name);
  await git(repo, 'worktree', 'add', '-q', '-b', branch, path, at);
  return path;
}

beforeAll(async () => {
  repo = await leanRepo();
  lanes = tempDir('lanes-offers-');
  const planFile = join(lanes, 'adm.yaml');
  writeFileSync(planFile, PLAN);
  const started = await lanesInProcess(['-C', repo, 'start', planFile, '--yes', '--no-run', '--headless']);
  expect(started.exitCode, started.stderr).toBe(0);
  base = (await git(repo, 'rev-parse', 'batch/adm')).trim();
  expect((await tick()).batch_state).toBe('running');
});

/** Frees a lane's branch once its case is done: the lane stays, detached. */
async function detach(lane: string, branch: string): Promise<void> {
  await git(lane, 'checkout', '-q', '--detach');
  await git(repo, 'branch', '-q', '-D', branch);
}

describe('offered lanes that are refused: one reason each, nothing written', () => {
  const cases: [string, string, () => Promise<string>, ((path: string) => Promise<void>)?][] = [
    ['a path that does not exist', 'batch_lane_foreign_repository', async () => '/nonexistent/lane/A'],
    [
      'a worktree of another repository',
      'batch_lane_foreign_repository',
      async () => {
        const other = await leanRepo();
        const path = join(lanes, 'foreign-A');
        await git(other, 'worktree', 'add', '-q', '-b', 'lane/adm/A', path);
        return path;
      },
    ],
    ['a plain folder', 'batch_lane_foreign_repository', async () => tempDir('lanes-plain-')],
    [
      'a subdirectory of a lane worktree',
      'batch_lane_foreign_repository',
      async () => {
        const lane = await worktree('sub-A', 'lane/adm/A');
        mkdirSync(join(lane, 'sub'));
        return join(lane, 'sub');
      },
      async (path) => detach(join(path, '..'), 'lane/adm/A'),
    ],
    ['the coordinator itself', 'batch_lane_is_coordinator', async () => repo],
    [
      'a symbolic link to the coordinator',
      'batch_lane_is_coordinator',
      async () => {
        const link = join(lanes, 'link-to-repo');
        symlinkSync(repo, link);
        return link;
      },
    ],
    [
      'a worktree on another branch',
      'batch_lane_branch_mismatch',
      async () => worktree('wrong-A', 'wrong/A'),
    ],
    [
      'a lane whose head is not the batch head',
      'batch_lane_base_mismatch',
      async () => {
        const lane = await worktree('ahead-A', 'lane/adm/A');
        writeFileSync(join(lane, 'extra.txt'), 'x\n');
        await git(lane, 'add', 'extra.txt');
        await git(lane, 'commit', '-q', '-m', 'ahead of the batch');
        return lane;
      },
      async (lane) => detach(lane, 'lane/adm/A'),
    ],
    [
      'a dirty lane',
      'batch_lane_dirty',
      async () => {
        const lane = await worktree('A', 'lane/adm/A');
        writeFileSync(join(lane, 'left-behind.txt'), 'x\n');
        return lane;
      },
      async (lane) => void (await git(lane, 'clean', '-q', '-f')),
    ],
  ];

  for (const [name, reason, make, after] of cases)
    it(`${name}: ${reason}`, async () => {
      const path = await make();
      const before = stateSnapshot();
      const report = await tick('--offer', `A=${path}`);
      expect(report.lane_refusals).toEqual([{ task_id: 'A', path, reason }]);
      expect(report.children.find((c) => c.task_id === 'A')!.state).toBe('pending');
      expect(stateSnapshot()).toEqual(before);
      await after?.(path);
    });

  it('a child that is not in the batch, and one that is not startable: batch_lane_unknown_child', async () => {
    const lane = await worktree('C', 'lane/adm/C');
    const before = stateSnapshot();
    const report = await tick('--offer', `ZZ=${lane}`, '--offer', `C=${lane}`);
    expect(report.lane_refusals).toEqual([
      { task_id: 'ZZ', path: lane, reason: 'batch_lane_unknown_child' },
      { task_id: 'C', path: lane, reason: 'batch_lane_unknown_child' },
    ]);
    expect(stateSnapshot()).toEqual(before);
  });

  it('a lane bound to a parked child, offered for another: batch_lane_occupied', async () => {
    // A is admitted and ends with no change: QA fails at the limit (1), A is parked with
    // its lane kept, while B goes on running.
    const laneA = join(lanes, 'A');
    const laneB = await worktree('B', 'lane/adm/B');
    let report = await tick('--offer', `A=${laneA}`, '--offer', `B=${laneB}`);
    expect(report.lane_refusals).toEqual([]);
    report = await tick('--exited', 'A=0');
    expect(report.children.find((c) => c.task_id === 'A')!.state).toBe('needs_human');
    expect(report.batch_state).toBe('running');
    // By hand, the parked lane is switched to D's branch: clean, at the batch head.
    await git(laneA, 'checkout', '-q', '-b', 'lane/adm/D');
    const before = stateSnapshot();
    report = await tick('--offer', `D=${laneA}`);
    expect(report.lane_refusals).toEqual([{ task_id: 'D', path: laneA, reason: 'batch_lane_occupied' }]);
    expect(stateSnapshot()).toEqual(before);
    await git(laneA, 'checkout', '-q', 'lane/adm/A');
    await git(repo, 'branch', '-q', '-D', 'lane/adm/D');
  });
});

describe('an offered lane that is admitted', () => {
  it('a symbolic link to a sound lane is admitted under its real path', async () => {
    const laneD = await worktree('D', 'lane/adm/D');
    const link = join(lanes, 'link-to-D');
    symlinkSync(laneD, link);
    const report = await tick('--offer', `D=${link}`);
    const d = report.children.find((c) => c.task_id === 'D')!;
    expect(report.lane_refusals).toEqual([]);
    expect(d.state).toBe('enrolled');
    expect(d.lane!.path).toBe(laneD);
  });
});
