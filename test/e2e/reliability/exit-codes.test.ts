import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/repo.js';
import {
  fileChild,
  integratedTasks,
  lanesInProcess,
  lanesProcess,
  leanRepo,
  readRecord,
  writePlan,
} from './support.js';

// Exit code 1 of DESIGN §9, "unexpected error" (docs/RELIABILITY.md lists where every other
// exit code is produced: 0, 3 and 4 in drift.test.ts, 2 in every bad-input test). An
// unexpected failure ends lanes with 1 and a message, and loses nothing: the batch goes on
// with `lanes resume` once the cause is gone.

describe('exit 1: an unexpected error', () => {
  it('git failing where lanes does not expect it: exit 1, and resume finishes the batch', async () => {
    const repo = await leanRepo();
    const realGit = (await execa('sh', ['-c', 'command -v git'])).stdout.trim();
    const shim = tempDir('lanes-shim-');
    // `git hash-object` (writing a delivery's commit) fails as on a full disk; every other git
    // command works. (Not `worktree add`: lanes writes a new lane's entry itself now.)
    writeFileSync(
      join(shim, 'git'),
      `#!/bin/sh\nif [ "$5" = hash-object ]; then echo "fatal: no space left on device (simulated)" >&2; exit 1; fi\nexec ${realGit} "$@"\n`,
    );
    chmodSync(join(shim, 'git'), 0o755);
    const plan = writePlan({
      batch: 'unx',
      executor: 'script',
      children: [fileChild('A'), fileChild('B', ['A'])],
    });
    const failed = await lanesProcess(['-C', repo, 'start', plan, '--yes', '--headless'], {
      PATH: `${shim}:${process.env.PATH ?? ''}`,
    });
    expect(failed.exitCode).toBe(1);
    expect(failed.stderr).toContain('no space left on device (simulated)');
    expect(readRecord(repo, 'unx')!.batch_state).toBe('running');
    const resumed = await lanesProcess(['-C', repo, 'resume', 'unx', '--headless']);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    const record = readRecord(repo, 'unx')!;
    expect(await integratedTasks(repo, `${record.base_head}..batch/unx`)).toEqual(['A', 'B']);
  }, 120_000);

  it('lanes wait that times out: exit 5, its own code', async () => {
    const repo = await leanRepo();
    const plan = writePlan({ batch: 'idle', executor: 'script', children: [fileChild('A')] });
    expect(
      (await lanesInProcess(['-C', repo, 'start', plan, '--yes', '--no-run', '--headless'])).exitCode,
    ).toBe(0);
    const r = await lanesInProcess(['-C', repo, 'wait', 'idle', '--until', 'completed', '--timeout', '1']);
    expect(r.exitCode).toBe(5);
    expect(r.stderr).toContain('still prepared after 1 s');
  });
});
