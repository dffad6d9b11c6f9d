import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BatchRecord } from '../../../src/core/records/record.js';
import { git, tempDir } from '../../helpers/repo.js';
import { until } from '../../helpers/until.js';
import {
  events,
  fileChild,
  lanesProcess,
  leanRepo,
  readRecord,
  spawnLanes,
  waitForGate,
  writePlan,
} from './support.js';

// What an adversarial pass found (docs/RELIABILITY.md, "Adversarial pass"), from the user's
// side: the CLI's exit and output, git's refs, the journal. Each case was seen to fail on
// the code before its fix.

const child = (r: BatchRecord | null, id: string) => r!.children.find((c) => c.task_id === id)!;
const laneBranch = (batch: string, id: string) => `refs/heads/lane/${batch}/${id}`;

/** The pids of processes whose command line holds `marker` (pgrep -f), this test's own. */
function pidsWith(marker: string): number[] {
  try {
    return execFileSync('pgrep', ['-f', marker], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

describe.concurrent('an adversarial pass', () => {
  it('a lane branch deleted by hand mid-run parks its child with the reason, and every way out works', async (ctx) => {
    const repo = await leanRepo();
    const gate = join(tempDir('lanes-gate-'), 'go');
    const plan = writePlan({
      batch: 'gone',
      executor: 'script',
      children: [fileChild('A', [], waitForGate(gate)), fileChild('B')],
    });
    const run = spawnLanes(ctx, ['-C', repo, 'start', plan, '--yes', '--headless']);
    await until(() => events(repo, 'gone').includes('executor-spawned:A'), 'A to run', { timeoutMs: 60_000 });
    await git(repo, 'update-ref', '-d', laneBranch('gone', 'A'));
    writeFileSync(gate, '');
    const result = await run;
    expect(result.exitCode, `${String(result.stdout)}\n${String(result.stderr)}`).toBe(3);
    const record = readRecord(repo, 'gone');
    expect(child(record, 'A').state).toBe('needs_human');
    expect(child(record, 'A').reason).toMatch(/lane\/gone\/A/);
    expect(child(record, 'B').state).toMatch(/integrated|released/);
    for (const args of [
      ['status', 'gone'],
      ['tick', 'gone'],
      ['drop', 'gone', 'A'],
    ]) {
      const step = await lanesProcess(['-C', repo, ...args]);
      expect([0, 3], `${args.join(' ')}: ${step.stderr}`).toContain(step.exitCode);
    }
    // The drop kept A's work: its branch made again, holding the file A's executor wrote.
    expect(await git(repo, 'show', `${laneBranch('gone', 'A')}:f/A.txt`)).toBe('A');
    const clean = await lanesProcess(['-C', repo, 'clean', 'gone', '--force']);
    expect(clean.exitCode, clean.stderr).toBe(0);
  });

  it('an executor that moves the batch branch itself is not adopted silently: the batch parks naming the commit', async (ctx) => {
    const repo = await leanRepo();
    // A's executor writes its file and also commits outside every scope onto batch/moved.
    const sneak =
      'echo evil > evil.txt && git add evil.txt && t=$(git write-tree) && ' +
      'c=$(echo sneak | git commit-tree "$t" -p refs/heads/batch/moved) && ' +
      'git update-ref refs/heads/batch/moved "$c" && git rm -q --cached evil.txt && rm evil.txt && ';
    const plan = writePlan({
      batch: 'moved',
      executor: 'script',
      children: [fileChild('A', [], sneak)],
    });
    const result = await spawnLanes(ctx, ['-C', repo, 'start', plan, '--yes', '--headless']);
    const record = readRecord(repo, 'moved')!;
    const tip = (await git(repo, 'rev-parse', 'refs/heads/batch/moved')).trim();
    const files = await git(repo, 'ls-tree', '-r', '--name-only', tip);
    expect(files).toContain('evil.txt'); // (the move happened)
    expect(record.batch_state, `${String(result.stdout)}`).toBe('needs_human');
    expect(result.exitCode).toBe(3);
    expect(`${record.children.map((c) => c.reason).join('\n')}\n${String(result.stdout)}`).toMatch(
      new RegExp(`by 1 commit lanes did not make \\(${tip.slice(0, 12)}\\)`),
    );
    expect(await git(repo, 'rev-parse', 'main')).not.toBe(tip);
    // The way on it names: a fresh approval adopts the commit, and the batch completes.
    const resumed = await lanesProcess(['-C', repo, 'resume', 'moved', '--approve', '--headless']);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(readRecord(repo, 'moved')!.adopted_heads.map((h) => h.to)).toContain(tip);
  });

  it('kill -9 of the coordinator and its executors: the lost attempt is not counted as a QA failure', async (ctx) => {
    const repo = await leanRepo();
    const gate = join(tempDir('lanes-gate-'), 'go');
    const marker = `lanes-lost-${process.pid}-${Date.now()}`;
    const plan = writePlan({
      batch: 'lost',
      executor: 'script',
      children: [fileChild('A', [], `[ -f '${gate}' ] || sleep 60 # ${marker}\n`)],
    });
    const victim = spawnLanes(ctx, ['-C', repo, 'start', plan, '--yes', '--headless']);
    await until(() => pidsWith(marker).length > 0, 'the executor to run', { timeoutMs: 60_000 });
    process.kill(victim.pid!, 'SIGKILL');
    await victim;
    for (const pid of pidsWith(marker)) process.kill(pid, 'SIGKILL');
    await until(() => pidsWith(marker).length === 0, 'the executor to be gone');
    writeFileSync(gate, '');
    const resumed = await lanesProcess(['-C', repo, 'resume', 'lost', '--headless']);
    expect(resumed.exitCode, `${resumed.stdout}\n${resumed.stderr}`).toBe(0);
    expect(
      events(repo, 'lost').filter((e) => e === 'qa-failed:A'),
      events(repo, 'lost').join(' '),
    ).toEqual([]);
    expect(child(readRecord(repo, 'lost'), 'A').state).toMatch(/integrated|released/);
  });
});
