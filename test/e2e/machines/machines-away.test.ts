import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { git } from '../../helpers/repo.js';
import { until } from '../../helpers/until.js';
import { processesOf, type SshMachine, type SshMachines, startSshMachines } from '../../helpers/sshd.js';
import { leftOnMachines, machineRepo } from './support.js';
import {
  events,
  integratedTasks,
  lanesProcess,
  readRecord,
  spawnLanes,
  worktreePaths,
  writePlan,
} from '../reliability/support.js';

// A machine that goes away mid-run (its sshd stopped, its connections dropped), from the
// user's side: for less than machine_timeout the batch goes on with the lanes elsewhere and
// completes once it is back, every child once, no QA failure counted; for longer, its lanes
// park `machine_lost: <name>` and each way out (resume once it is back, move a child to
// another machine) completes. Run `npm run -s build` first.

/** Children that wait for `$HOME/gate` on their machine, then write who ran them (appended: once is one line). */
function gatedPlan(batch: string, children: string[]): string {
  return writePlan({
    batch,
    executor: 'script',
    max_parallel: children.length,
    children: children.map((id) => ({
      id,
      goal: `write who ran ${id} once the gate is open`,
      scope: [`who/${id}.txt`],
      acceptance: [{ id: 'written', run: ['test', '-s', `who/${id}.txt`] }],
      run: `while [ ! -f "$HOME/gate" ]; do sleep 0.1; done; mkdir -p who && id -un >> who/${id}.txt`,
    })),
  });
}

/** A machine gone: its sshd stopped, the coordinator's master to it killed, every connection to it dropped. */
async function takeAway(fixture: SshMachines, repo: string, m: SshMachine): Promise<void> {
  await fixture.stopSshd(m);
  const masters = await execa(
    'pgrep',
    ['-f', `ControlPath=${join(repo, '.git', 'lanes', 'ssh')}/${m.name}`],
    {
      reject: false,
    },
  );
  // (the master, and any op through it: one may have ended since pgrep saw it)
  for (const pid of String(masters.stdout).split('\n').filter(Boolean)) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // gone already
    }
  }
  await fixture.dropConnections(m);
}

/** Each child's state and machine, and the journal's last events (what a wait that timed out saw). */
function progress(repo: string, batch: string): string {
  const children = readRecord(repo, batch)?.children ?? [];
  const states = children.map((c) => `${c.task_id}@${machineOf(c)}=${c.state}`).join(' ');
  return `${states}; ${events(repo, batch).slice(-12).join(' ')}`;
}

const machineOf = (c: object) => (c as { machine?: string }).machine;

/** What runs under the coordinator and as m's user (what a wait that timed out saw). */
async function processTrees(pid: number | undefined, m: SshMachine): Promise<string> {
  const mine = await execa('ps', ['-o', 'pid,ppid,etimes,args', '--ppid', String(pid ?? 0)], {
    reject: false,
  });
  const theirs = await execa('ps', ['-o', 'pid,ppid,etimes,args', '-u', m.user], { reject: false });
  return `coordinator's children:\n${String(mine.stdout)}\n${m.user}'s processes:\n${String(theirs.stdout)}`;
}

describe('a machine that goes away mid-run', () => {
  let fixture: SshMachines;
  beforeAll(async () => {
    fixture = await startSshMachines(2);
  }, 60_000);
  afterEach(async () => {
    for (const m of fixture.machines) await fixture.startSshd(m); // (a test that failed with one away)
    expect(await leftOnMachines(fixture)).toEqual([]);
    for (const m of fixture.machines) expect(await processesOf(m.user), m.name).toEqual([]);
  }, 30_000);
  afterAll(async () => {
    await fixture?.close();
  }, 30_000);

  it('away for less than machine_timeout: the lanes elsewhere go on, and the batch completes once it is back', async (test) => {
    const repo = await machineRepo(fixture, { slots: 2 });
    const [m1, m2] = fixture.machines as [SshMachine, SshMachine];
    for (const m of fixture.machines) rmSync(join(m.home, 'gate'), { force: true });
    const children = ['w1', 'w2', 'w3', 'w4'];
    const run = spawnLanes(test, ['-C', repo, 'start', gatedPlan('away', children), '--yes', '--headless']);
    let said = '';
    run.stderr?.on('data', (chunk: Buffer) => (said += chunk.toString()));
    await until(
      () => readRecord(repo, 'away')?.children.every((c) => c.state === 'enrolled'),
      'every child enrolled on its machine',
      { timeoutMs: 60_000, everyMs: 100 },
    );
    await takeAway(fixture, repo, m2);
    // The gates open on both: m2's children end while it is away (their ends come once it is back).
    for (const m of fixture.machines) writeFileSync(join(m.home, 'gate'), '');
    const status = await until(
      async () => {
        const r = await lanesProcess(['-C', repo, 'status', 'away']);
        return /machine m2 .*reconnecting/.test(r.stdout) ? r.stdout : null;
      },
      'lanes status shows m2 reconnecting',
      { timeoutMs: 30_000, everyMs: 250 },
    );
    expect(status).toMatch(/machine m1 .*ready/);
    // A lane of m1 integrates while m2 is still away.
    await until(
      () => readRecord(repo, 'away')?.children.some((c) => machineOf(c) === 'm1' && c.state === 'released'),
      'a lane of m1 integrated while m2 is away',
      {
        timeoutMs: 60_000,
        everyMs: 100,
        detail: () => `${progress(repo, 'away')}; exit ${run.exitCode}: ${said.slice(-1500)}`,
      },
    );
    expect((await fixture.ssh(m2, 'true')).exitCode).toBe(255); // (it was away all along)
    await fixture.startSshd(m2);
    await until(() => run.exitCode !== null, 'the batch ended once m2 was back', {
      timeoutMs: 90_000,
      everyMs: 100,
      detail: async () =>
        `${progress(repo, 'away')}; ${await processTrees(run.pid, m2)}; ${said.slice(-3000)}`,
    });
    const r = await run;
    expect(r.exitCode, `${String(r.stdout)}\n${String(r.stderr)}`).toBe(0);
    const record = readRecord(repo, 'away')!;
    expect(record.batch_state).toBe('completed');
    expect((await integratedTasks(repo, 'main..batch/away')).sort()).toEqual(children);
    const users = new Map([m1, m2].map((m) => [m.name, m.user]));
    for (const child of record.children) {
      expect(child.qa_failures, child.task_id).toBe(0);
      const lines = (await git(repo, 'show', `batch/away:who/${child.task_id}.txt`)).trim().split('\n');
      expect(lines, child.task_id).toEqual([users.get(machineOf(child)!)]); // (once, on its machine)
    }
    expect(await worktreePaths(repo)).toEqual([repo]);
  }, 180_000);

  /**
   * A batch whose child `p2` (on m2) writes who ran it and then waits for m2's gate, and `p1`
   * (on m1) completes; m2 goes away for longer than machine_timeout (3 s here): the run
   * stops with `p2` parked `machine_lost: m2`, its ways on named by lanes status.
   */
  async function lostOne(test: Parameters<typeof spawnLanes>[0], batch: string): Promise<string> {
    const repo = await machineRepo(fixture, { slots: 2, more: { machine_timeout: 0.05 } });
    const [m1, m2] = fixture.machines as [SshMachine, SshMachine];
    rmSync(join(m2.home, 'gate'), { force: true });
    writeFileSync(join(m1.home, 'gate'), '');
    const plan = writePlan({
      batch,
      executor: 'script',
      max_parallel: 2,
      children: ['p1', 'p2'].map((id, i) => ({
        id,
        goal: `write who ran ${id}, then wait for the gate`,
        scope: [`who/${id}.txt`],
        machine: `m${i + 1}`,
        acceptance: [{ id: 'written', run: ['test', '-s', `who/${id}.txt`] }],
        run: `mkdir -p who && id -un >> who/${id}.txt && while [ ! -f "$HOME/gate" ]; do sleep 0.1; done`,
      })),
    });
    const run = spawnLanes(test, ['-C', repo, 'start', plan, '--yes', '--headless']);
    await until(
      () => {
        const p2 = readRecord(repo, batch)?.children.find((c) => c.task_id === 'p2');
        return p2?.lane && existsSync(join(p2.lane.path, 'who', 'p2.txt'));
      },
      'p2 running on m2',
      { timeoutMs: 60_000, everyMs: 100 },
    );
    await takeAway(fixture, repo, m2);
    const r = await run;
    const record = readRecord(repo, batch)!;
    const p2 = record.children.find((c) => c.task_id === 'p2')!;
    expect([p2.state, p2.reason], `${String(r.stdout)}\n${String(r.stderr)}`).toEqual([
      'needs_human',
      'machine_lost: m2',
    ]);
    expect(p2.qa_failures).toBe(0);
    expect(record.children.find((c) => c.task_id === 'p1')!.state).toBe('released');
    expect(r.exitCode).toBe(3);
    const status = await lanesProcess(['-C', repo, 'status', batch]);
    expect(status.stdout).toContain('machine_lost: m2');
    expect(status.stdout).toContain('--move');
    return repo;
  }

  it('lost for longer than machine_timeout: p2 parks machine_lost; back again, lanes resume completes it', async (test) => {
    const repo = await lostOne(test, 'lost');
    const m2 = fixture.machines[1]!;
    await fixture.startSshd(m2);
    writeFileSync(join(m2.home, 'gate'), '');
    const r = await lanesProcess(['-C', repo, 'resume', 'lost', '--approve', '--headless']);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    const record = readRecord(repo, 'lost')!;
    expect(record.batch_state).toBe('completed');
    expect((await integratedTasks(repo, 'main..batch/lost')).sort()).toEqual(['p1', 'p2']);
    expect((await git(repo, 'show', 'batch/lost:who/p2.txt')).trim()).toBe(m2.user); // (once, on m2)
    for (const child of record.children) expect(child.qa_failures, child.task_id).toBe(0);
  }, 180_000);

  it('lost: lanes resume --approve --move p2=m1 runs it again on m1 and completes, the old lane kept on m2', async (test) => {
    const repo = await lostOne(test, 'moved');
    const [m1, m2] = fixture.machines as [SshMachine, SshMachine];
    const old = readRecord(repo, 'moved')!.children.find((c) => c.task_id === 'p2')!.lane!.path;
    const r = await lanesProcess([
      '-C',
      repo,
      'resume',
      'moved',
      '--approve',
      '--move',
      'p2=m1',
      '--headless',
    ]);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    const record = readRecord(repo, 'moved')!;
    expect(record.batch_state).toBe('completed');
    const p2 = record.children.find((c) => c.task_id === 'p2')!;
    expect(machineOf(p2)).toBe('m1');
    expect((await git(repo, 'show', 'batch/moved:who/p2.txt')).trim()).toBe(m1.user);
    // The old lane's work is still on m2 (nothing of it deleted while m2 was away)…
    expect(existsSync(join(old, 'who', 'p2.txt'))).toBe(true);
    // …until the batch's clean-up there, once m2 is back.
    await fixture.startSshd(m2);
    const clean = await lanesProcess(['-C', repo, 'clean', 'moved']);
    expect(clean.exitCode, `${clean.stdout}\n${clean.stderr}`).toBe(0);
    // Its work was brought home first, onto a branch named after the lane and its machine.
    expect((await git(repo, 'show', 'lane/moved/p2@m2:who/p2.txt')).trim()).toBe(m2.user);
    expect(existsSync(old)).toBe(false);
  }, 180_000);
});
