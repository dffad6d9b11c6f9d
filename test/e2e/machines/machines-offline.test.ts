import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { git } from '../../helpers/repo.js';
import { until } from '../../helpers/until.js';
import { processesOf, type SshMachines } from '../../helpers/sshd.js';
import { machineRepo, machinesForFile, WAIT_FOREVER, whoPlan } from './support.js';
import { lanesProcess, readRecord, spawnLanes, worktreePaths } from '../reliability/support.js';

// `lanes cancel` and `lanes drop` with no coordinator running (it was killed -9) do for the
// lanes on machines what they do for local lanes: their executors are stopped there (no
// tmux session, no process of the machines' users left), and their work is kept on their
// branches here. Run `npm run -s build` first.

async function tmuxOf(fixture: SshMachines): Promise<string[]> {
  const left: string[] = [];
  for (const m of fixture.machines) {
    const tmux = await execa('tmux', ['-L', 'lanes', 'list-sessions', '-F', '#{session_name}'], {
      reject: false,
      env: { TMUX_TMPDIR: '/tmp' },
      uid: m.uid,
    });
    if (tmux.exitCode === 0) left.push(...String(tmux.stdout).split('\n').filter(Boolean));
  }
  return left;
}

function psOf(fixture: SshMachines): string {
  const users = fixture.machines.map((m) => m.user).join(',');
  return spawnSync('ps', ['-o', 'user,pid,args', '-u', users], { encoding: 'utf8' }).stdout;
}

/** Every process of the machines' users (the sshd sessions of a closed connection go soon after it). */
async function usersProcesses(fixture: SshMachines): Promise<number[]> {
  return (await Promise.all(fixture.machines.map((m) => processesOf(m.user)))).flat();
}

describe('drop and cancel of a batch on machines whose coordinator was killed', () => {
  const machines = machinesForFile();

  async function killedMidRun(test: Parameters<typeof spawnLanes>[0], batch: string, children: string[]) {
    const repo = await machineRepo(machines.fixture);
    const run = spawnLanes(test, [
      '-C',
      repo,
      'start',
      whoPlan(batch, children, 4, WAIT_FOREVER),
      '--yes',
      '--headless',
    ]);
    await until(
      () => {
        const kids = readRecord(repo, batch)?.children ?? [];
        return (
          kids.length === children.length &&
          kids.every((c) => c.lane && existsSync(join(c.lane.path, 'who', `${c.task_id}.txt`)))
        );
      },
      'every child wrote who ran it',
      { timeoutMs: 60_000, everyMs: 100 },
    );
    run.kill('SIGKILL');
    await run;
    expect((await tmuxOf(machines.fixture)).length).toBeGreaterThan(0);
    return repo;
  }

  it('lanes cancel stops the executors on the machines and keeps their work on their branches here', async (test) => {
    const repo = await killedMidRun(test, 'ocx', ['o1', 'o2']);
    const cancel = await lanesProcess(['-C', repo, 'cancel', 'ocx']);
    expect(cancel.exitCode, cancel.stderr).toBe(0);
    const record = readRecord(repo, 'ocx')!;
    expect(record.batch_state).toBe('cancelled');
    expect(await tmuxOf(machines.fixture)).toEqual([]);
    await until(
      async () => (await usersProcesses(machines.fixture)).length === 0,
      'no process of the machines users',
      {
        timeoutMs: 15_000,
        everyMs: 100,
        detail: () => psOf(machines.fixture),
      },
    );
    const users = new Map(machines.fixture.machines.map((m) => [m.name, m.user]));
    for (const child of record.children) {
      const who = (await git(repo, 'show', `lane/ocx/${child.task_id}:who/${child.task_id}.txt`)).trim();
      expect(who, child.task_id).toBe(users.get((child as { machine?: string }).machine!));
      expect(existsSync(child.lane!.path), `${child.task_id}'s worktree on its machine`).toBe(false);
    }
    expect(await worktreePaths(repo)).toEqual([repo]);
  }, 120_000);

  it('lanes drop stops that lane on its machine and leaves the others running', async (test) => {
    const repo = await killedMidRun(test, 'odr', ['d1', 'd2']);
    const drop = await lanesProcess(['-C', repo, 'drop', 'odr', 'd1']);
    expect(drop.exitCode, drop.stderr).toBe(0);
    const states = readRecord(repo, 'odr')!.children.map((c) => [c.task_id, c.state]);
    expect(states.find(([t]) => t === 'd1')?.[1]).toBe('dropped');
    const sessions = await tmuxOf(machines.fixture);
    expect(sessions.filter((s) => s.includes('-d1-'))).toEqual([]);
    expect(sessions.filter((s) => s.includes('-d2-'))).toHaveLength(1);
    const cancel = await lanesProcess(['-C', repo, 'cancel', 'odr']);
    expect(cancel.exitCode, cancel.stderr).toBe(0);
    expect(await tmuxOf(machines.fixture)).toEqual([]);
    expect((await git(repo, 'show', 'lane/odr/d1:who/d1.txt')).trim()).not.toBe('');
  }, 120_000);
});
