import { realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Report } from '../../../src/core/records/report.js';
import type { BatchRecord } from '../../../src/core/records/record.js';
import { writeFiles } from '../../helpers/batch.js';
import { git, makeRepo, runCli, snapshotTree, tempDir } from '../../helpers/repo.js';
import { rev, childOf } from '../../helpers/tick-git.js';
// The core runner driven tick by tick against real git repositories: the test plays the
// steward (git worktree add/remove) and the executor (writes files in a lane, then says
// the executor exited). Never mocks git; never commits in the user's main worktree.
// The CLI tests need `npm run -s build` first.

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
        '--allow-overlap', // (the same plan's scopes as batch human, on purpose)
      ]);
      expect(json.exitCode, json.stderr).toBe(0);
      expect(json.stdout.trim().split('\n')).toHaveLength(1);
      const first = JSON.parse(json.stdout) as Report;
      expect(first.batch_state).toBe('prepared');
      expect(first.handoffs).toHaveLength(2);
      for (const h of first.handoffs) {
        expect(Object.keys(h).sort()).toEqual(['action', 'base_head', 'lane_branch', 'machine', 'task_id']);
        expect(h).toMatchObject({
          action: 'provision',
          lane_branch: `lane/machine/${h.task_id}`,
          base_head: base,
          machine: 'local',
        });
      }
      expect(await rev(root, 'refs/heads/batch/machine')).toBe(base);

      const status = await runCli(['-C', root, 'status', 'machine', '--json']);
      expect(status.exitCode, status.stderr).toBe(0);
      expect(status.stdout.trim().split('\n')).toHaveLength(1);
      const both = JSON.parse(status.stdout) as { record: BatchRecord; report: Report };
      expect(Object.keys(both).sort()).toEqual(['record', 'report', 'usage']);
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
