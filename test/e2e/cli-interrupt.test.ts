import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { CLI, makeRepo, runCli } from '../helpers/repo.js';
import { until } from '../helpers/until.js';
import { readRecord, stateDir } from '../helpers/ways-out.js';

// Ctrl-C (SIGINT) and SIGTERM in a headless run are the user's interrupt (issue 26): the
// executors are stopped, nothing is counted against them (no QA run, no quick-exit
// streak, no dispatch pause), the batch is left resumable and the exit says how.

function plan(marker: string): string {
  const script = `if [ -f ${marker} ]; then echo done > $LANE_TASK.txt; else sleep 60; fi`;
  const child = (id: string) => `  - id: ${id}
    goal: Works until interrupted
    scope: ["${id}.txt"]
    acceptance: [{ id: ok, run: "test -f ${id}.txt" }]
    run: "LANE_TASK=${id}; ${script}"
`;
  return `batch: intr\nmax_parallel: 2\nexecutor: script\nchildren:\n${child('a')}${child('b')}`;
}

describe.each(['SIGINT', 'SIGTERM'] as const)('%s in a headless run', (signal) => {
  it('stops the executors, counts nothing, runs no QA and says how to resume', async () => {
    const repo = await makeRepo();
    const marker = join(repo, '..', 'go-on');
    writeFileSync(join(repo, '..', 'plan.yaml'), plan(marker));
    const run = execa(process.execPath, [CLI, '-C', repo, 'start', '../plan.yaml', '--yes', '--headless'], {
      env: { NO_COLOR: '1' },
      reject: false,
      stdin: 'ignore',
    });
    let stderr = '';
    run.stderr!.on('data', (d: Buffer) => (stderr += String(d)));
    await until(() => (stderr.match(/executor started/g) ?? []).length === 2, 'both executors', {
      timeoutMs: 20_000,
      detail: () => stderr,
    });
    // While it runs, status says who runs it (the lock's holder is alive).
    const live = await runCli(['-C', repo, 'status']);
    expect(live.stdout).toMatch(new RegExp(`intr {2}running — run by pid ${run.pid} `));
    expect(live.stdout).toMatch(/next: wait for it/);
    run.kill(signal);
    const done = await run;
    expect(done.exitCode, stderr).toBe(3);
    expect(stderr).not.toContain('dispatch paused');
    expect(stderr).not.toContain('running QA');
    expect(stderr).toMatch(/interrupted.*(lanes|node \S+)( -C \S+)? resume intr/);
    const record = readRecord(repo, 'intr')!;
    expect(record.batch_state).toBe('running');
    expect(record.children.map((c) => c.qa_failures)).toEqual([0, 0]);
    for (const task of ['a', 'b']) {
      const kernel = JSON.parse(
        readFileSync(join(stateDir(repo), 'batches', 'intr', 'tasks', `${task}.json`), 'utf8'),
      ) as { qa_runs: unknown[] };
      expect(kernel.qa_runs).toEqual([]);
    }
    // Stopped now: status says nobody runs it, and the command that goes on.
    const stopped = await runCli(['-C', repo, 'status']);
    expect(stopped.stdout).toContain('intr  running — stopped: no lanes process runs it');
    expect(stopped.stdout).toMatch(/next: (lanes|node \S+)( -C \S+)? resume intr$/m);
    const journal = readFileSync(join(stateDir(repo), 'batches', 'intr.events.jsonl'), 'utf8');
    expect(journal).not.toContain('suspect-dispatch');

    // The batch goes on where it was.
    writeFileSync(marker, '');
    const resumed = await runCli(['-C', repo, 'resume', '--headless']);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(readRecord(repo, 'intr')!.batch_state).toBe('completed');
    expect(existsSync(marker)).toBe(true);
  }, 60_000);
});
