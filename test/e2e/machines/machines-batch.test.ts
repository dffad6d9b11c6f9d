import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { git } from '../../helpers/repo.js';
import { until } from '../../helpers/until.js';
import { processesOf } from '../../helpers/sshd.js';
import { leftOnMachines, machineRepo, machinesForFile, WAIT_FOREVER, whoPlan } from './support.js';
import {
  integratedTasks,
  lanesProcess,
  readRecord,
  spawnLanes,
  worktreePaths,
  writePlan,
} from '../reliability/support.js';

// A batch whose lanes all run on two machines of real OpenSSH (test/helpers/sshd.ts), none
// on the coordinator's: each child's script writes who it ran as, and the batch branch
// shows every child ran as its machine's user, in a worktree of that machine's cache (the
// coordinator's repository has none of theirs). After it, nothing of the batch is left on
// either machine. Run `npm run -s build` first.

const CHILDREN = ['c1', 'c2', 'c3', 'c4', 'c5', 'c6'];

/** A machine nothing answers for (a refused connection on loopback). */
/** Children that write who ran them (six, by default) at parallel 6. */
const whoamiPlan = (batch: string, children = CHILDREN) => whoPlan(batch, children, 6);

const AWAY = { name: 'm3', ssh: 'ssh://nobody@127.0.0.9:1', slots: 3 };

describe('a batch on two machines', () => {
  const machines = machinesForFile();

  it('runs every child on a machine, as its user, and leaves nothing there', async () => {
    const repo = await machineRepo(machines.fixture);
    const r = await lanesProcess(['-C', repo, 'start', whoamiPlan('mach', CHILDREN), '--yes', '--headless']);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    const record = readRecord(repo, 'mach')!;
    expect(record.batch_state).toBe('completed');
    expect((await integratedTasks(repo, 'main..batch/mach')).sort()).toEqual(CHILDREN);
    const users = new Map(machines.fixture.machines.map((m) => [m.name, m.user]));
    const placed: Record<string, number> = {};
    for (const child of record.children) {
      const machine = (child as { machine?: string }).machine;
      expect(machine, child.task_id).toBeDefined();
      placed[machine!] = (placed[machine!] ?? 0) + 1;
      const who = (await git(repo, 'show', `batch/mach:who/${child.task_id}.txt`)).trim();
      expect(who, child.task_id).toBe(users.get(machine!));
    }
    expect(placed).toEqual({ m1: 3, m2: 3 });
    expect(await worktreePaths(repo)).toEqual([repo]);
    expect(await leftOnMachines(machines.fixture)).toEqual([]);
    for (const m of machines.fixture.machines) {
      const left = await processesOf(m.user);
      const ps = left.length
        ? String((await execa('ps', ['-o', 'pid,ppid,args', '-p', left.join(',')], { reject: false })).stdout)
        : '';
      expect(left, `${m.name}: ${ps}`).toEqual([]);
    }
  }, 180_000);

  it('names a machine that does not answer at the start and leaves it out', async () => {
    const repo = await machineRepo(machines.fixture, {
      machines: [...machines.fixture.machines.map((m) => ({ name: m.name, ssh: m.name, slots: 3 })), AWAY],
    });
    const r = await lanesProcess([
      '-C',
      repo,
      'start',
      whoamiPlan('away', ['a1', 'a2']),
      '--yes',
      '--headless',
    ]);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stderr).toMatch(/machine m3 +3 slots +left out: .+refused/);
    expect(r.stderr).toMatch(/machine m1 +3 slots +ready/);
    const record = readRecord(repo, 'away')!;
    expect(record.batch_state).toBe('completed');
    for (const child of record.children)
      expect(['m1', 'm2']).toContain((child as { machine?: string }).machine);
    expect(await leftOnMachines(machines.fixture)).toEqual([]);
  }, 120_000);

  it('refuses with exit 2, naming each machine, when none answers; nothing is written', async () => {
    const repo = await machineRepo(machines.fixture, {
      machines: [AWAY, { ...AWAY, name: 'm4', ssh: 'ssh://nobody@127.0.0.9:2' }],
    });
    const r = await lanesProcess(['-C', repo, 'start', whoamiPlan('none', ['n1']), '--yes', '--headless']);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain('no machine can run lanes');
    expect(r.stderr).toMatch(/m3 \(.+\), m4 \(.+\)/);
    expect(readRecord(repo, 'none')).toBeNull();
    expect(existsSync(join(repo, '.git', 'lanes', 'batches'))).toBe(false);
  }, 60_000);

  it('goes on through dropped connections: each child once, no QA failure counted', async (test) => {
    const repo = await machineRepo(machines.fixture);
    const gated = ['k1', 'k2', 'k3', 'k4'];
    for (const m of machines.fixture.machines) rmSync(join(m.home, 'gate'), { force: true });
    const plan = writePlan({
      batch: 'drop',
      executor: 'script',
      max_parallel: 4,
      children: gated.map((id) => ({
        id,
        goal: `write who ran ${id} once the gate is open`,
        scope: [`who/${id}.txt`],
        acceptance: [{ id: 'written', run: ['test', '-s', `who/${id}.txt`] }],
        run: `while [ ! -f "$HOME/gate" ]; do sleep 0.1; done; mkdir -p who && id -un >> who/${id}.txt`,
      })),
    });
    const run = spawnLanes(test, ['-C', repo, 'start', plan, '--yes', '--headless']);
    await until(
      () => readRecord(repo, 'drop')?.children.every((c) => c.state === 'enrolled'),
      'every child enrolled on its machine',
      { timeoutMs: 60_000, everyMs: 100 },
    );
    // The coordinator's ssh masters (one a machine), found by their control paths.
    const masters = async () => {
      const r = await execa(
        'pgrep',
        ['-f', `ControlMaster=yes -o ControlPath=${join(repo, '.git', 'lanes', 'ssh')}/`],
        {
          reject: false,
        },
      );
      return String(r.stdout).split('\n').filter(Boolean).map(Number);
    };
    const before = await masters();
    expect(before).toHaveLength(2);
    for (const pid of before) process.kill(pid, 'SIGKILL');
    for (const m of machines.fixture.machines) writeFileSync(join(m.home, 'gate'), '');
    const r = await run;
    expect(r.exitCode, `${String(r.stdout)}\n${String(r.stderr)}`).toBe(0);
    const record = readRecord(repo, 'drop')!;
    expect(record.batch_state).toBe('completed');
    expect((await integratedTasks(repo, 'main..batch/drop')).sort()).toEqual(gated);
    for (const child of record.children) {
      expect(child.qa_failures, child.task_id).toBe(0);
      const lines = (await git(repo, 'show', `batch/drop:who/${child.task_id}.txt`)).trim().split('\n');
      expect(lines, child.task_id).toHaveLength(1); // (it ran once)
    }
    expect(await leftOnMachines(machines.fixture)).toEqual([]);
  }, 180_000);

  it('finds its remote lanes again after kill -9 of the coordinator: lanes resume completes, each child once', async (test) => {
    const repo = await machineRepo(machines.fixture);
    const gated = ['r1', 'r2', 'r3', 'r4'];
    for (const m of machines.fixture.machines) rmSync(join(m.home, 'gate'), { force: true });
    const plan = writePlan({
      batch: 'crash',
      executor: 'script',
      max_parallel: 4,
      children: gated.map((id) => ({
        id,
        goal: `write who ran ${id} once the gate is open`,
        scope: [`who/${id}.txt`],
        acceptance: [{ id: 'written', run: ['test', '-s', `who/${id}.txt`] }],
        run: `while [ ! -f "$HOME/gate" ]; do sleep 0.1; done; mkdir -p who && id -un >> who/${id}.txt`,
      })),
    });
    const first = spawnLanes(test, ['-C', repo, 'start', plan, '--yes', '--headless']);
    // Every executor running in its tmux session on its machine, then the coordinator killed.
    await until(
      async () => {
        const running = await Promise.all(
          machines.fixture.machines.map((m) =>
            machines.fixture.ssh(
              m,
              'tmux -L lanes list-sessions -F "#{session_name}" 2>/dev/null | grep -c crash || true',
            ),
          ),
        );
        return running.reduce((n, r) => n + Number(r.stdout.trim() || 0), 0) === gated.length;
      },
      'four sessions running on the machines',
      { timeoutMs: 60_000, everyMs: 200 },
    );
    first.kill('SIGKILL');
    await first;
    for (const m of machines.fixture.machines) writeFileSync(join(m.home, 'gate'), '');
    const r = await lanesProcess(['-C', repo, 'resume', 'crash', '--headless']);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    const record = readRecord(repo, 'crash')!;
    expect(record.batch_state).toBe('completed');
    expect((await integratedTasks(repo, 'main..batch/crash')).sort()).toEqual(gated);
    // (the masters the killed coordinator left were ended by the resume's, which ended with it)
    const ssh = await execa('pgrep', ['-f', `ControlPath=${join(repo, '.git', 'lanes', 'ssh')}/`], {
      reject: false,
    });
    expect(String(ssh.stdout)).toBe('');
    for (const child of record.children) {
      expect(child.qa_failures, child.task_id).toBe(0);
      const lines = (await git(repo, 'show', `batch/crash:who/${child.task_id}.txt`)).trim().split('\n');
      expect(lines, child.task_id).toHaveLength(1); // (it ran once)
    }
    expect(await leftOnMachines(machines.fixture)).toEqual([]);
  }, 180_000);

  it('cancelled: the lanes go from the machines, and their work is kept on their branches here', async (test) => {
    const repo = await machineRepo(machines.fixture);
    const plan = whoPlan('cxl', ['x1', 'x2'], 2, WAIT_FOREVER);
    const run = spawnLanes(test, ['-C', repo, 'start', plan, '--yes', '--headless']);
    await until(
      () => {
        const children = readRecord(repo, 'cxl')?.children ?? [];
        return (
          children.length === 2 &&
          children.every((c) => c.lane && existsSync(join(c.lane.path, 'who', `${c.task_id}.txt`)))
        );
      },
      'both children wrote who ran them',
      { timeoutMs: 60_000, everyMs: 100 },
    );
    const cancel = await lanesProcess(['-C', repo, 'cancel', 'cxl']);
    expect(cancel.exitCode, cancel.stderr).toBe(0);
    await run;
    expect(readRecord(repo, 'cxl')!.batch_state).toBe('cancelled');
    const users = new Map(machines.fixture.machines.map((m) => [m.name, m.user]));
    for (const child of readRecord(repo, 'cxl')!.children) {
      const who = (await git(repo, 'show', `lane/cxl/${child.task_id}:who/${child.task_id}.txt`)).trim();
      expect(who, child.task_id).toBe(users.get((child as { machine?: string }).machine!));
    }
    expect(await worktreePaths(repo)).toEqual([repo]);
    expect(await leftOnMachines(machines.fixture)).toEqual([]);
  }, 120_000);

  it('a dropped lane on a machine: the batch goes on, and the lane is gone from the machine with its work kept here', async (test) => {
    const repo = await machineRepo(machines.fixture);
    const plan = writePlan({
      batch: 'drp',
      executor: 'script',
      max_parallel: 2,
      children: [
        {
          id: 'stuck',
          goal: 'write who ran it, then never end',
          scope: ['who/stuck.txt'],
          acceptance: [{ id: 'written', run: ['test', '-s', 'who/stuck.txt'] }],
          run: 'mkdir -p who && id -un > who/stuck.txt && while :; do sleep 0.1; done',
        },
        {
          id: 'fine',
          goal: 'write who ran it',
          scope: ['who/fine.txt'],
          acceptance: [{ id: 'written', run: ['test', '-s', 'who/fine.txt'] }],
          run: 'mkdir -p who && id -un > who/fine.txt',
        },
      ],
    });
    const run = spawnLanes(test, ['-C', repo, 'start', plan, '--yes', '--headless']);
    await until(
      () => {
        const stuck = readRecord(repo, 'drp')?.children.find((c) => c.task_id === 'stuck');
        return stuck?.lane && existsSync(join(stuck.lane.path, 'who', 'stuck.txt'));
      },
      'the stuck child wrote who ran it',
      { timeoutMs: 60_000, everyMs: 100 },
    );
    const drop = await lanesProcess(['-C', repo, 'drop', 'drp', 'stuck']);
    expect(drop.exitCode, drop.stderr).toBe(0);
    const r = await run;
    const record = readRecord(repo, 'drp')!;
    expect(record.children.map((c) => [c.task_id, c.state])).toEqual([
      ['stuck', 'dropped'],
      ['fine', 'released'],
    ]);
    expect(await integratedTasks(repo, 'main..batch/drp')).toEqual(['fine']);
    expect(r.exitCode, `${String(r.stdout)}\n${String(r.stderr)}`).not.toBe(1);
    const stuck = record.children[0]!;
    const users = new Map(machines.fixture.machines.map((m) => [m.name, m.user]));
    expect((await git(repo, 'show', 'lane/drp/stuck:who/stuck.txt')).trim()).toBe(
      users.get((stuck as { machine?: string }).machine!),
    );
    expect(await worktreePaths(repo)).toEqual([repo]);
    expect(await leftOnMachines(machines.fixture)).toEqual([]);
  }, 120_000);

  it('lanes clean of a batch whose coordinator was killed removes what it left on the machines', async (test) => {
    const repo = await machineRepo(machines.fixture);
    const plan = whoPlan('cln', ['y1', 'y2'], 2, WAIT_FOREVER);
    const run = spawnLanes(test, ['-C', repo, 'start', plan, '--yes', '--headless']);
    await until(
      () => {
        const children = readRecord(repo, 'cln')?.children ?? [];
        return (
          children.length === 2 &&
          children.every((c) => c.lane && existsSync(join(c.lane.path, 'who', `${c.task_id}.txt`)))
        );
      },
      'both children wrote who ran them',
      { timeoutMs: 60_000, everyMs: 100 },
    );
    run.kill('SIGKILL');
    await run;
    expect((await leftOnMachines(machines.fixture)).length).toBeGreaterThan(0);
    const cancel = await lanesProcess(['-C', repo, 'cancel', 'cln']);
    expect(cancel.exitCode, cancel.stderr).toBe(0);
    const cancelled = readRecord(repo, 'cln')!;
    const clean = await lanesProcess(['-C', repo, 'clean', 'cln']);
    expect(clean.exitCode, clean.stderr).toBe(0);
    expect(await leftOnMachines(machines.fixture)).toEqual([]);
    const users = new Map(machines.fixture.machines.map((m) => [m.name, m.user]));
    for (const child of cancelled.children) {
      // (the cancel brought the work home onto its lane branch; clean keeps it as a local lane's)
      const kept = `refs/lanes-trash/cln/${child.task_id}`;
      const who = (await git(repo, 'show', `${kept}:who/${child.task_id}.txt`)).trim();
      expect(who, child.task_id).toBe(users.get((child as { machine?: string }).machine!));
    }
    const ssh = await execa('pgrep', ['-f', `ControlPath=${join(repo, '.git', 'lanes', 'ssh')}/`], {
      reject: false,
    });
    expect(String(ssh.stdout)).toBe('');
  }, 120_000);
});
