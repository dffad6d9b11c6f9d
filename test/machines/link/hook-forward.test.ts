import { statSync } from 'node:fs';
import { createServer, createConnection } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MachinePool } from '../../../src/machines/link/machine-pool.js';
import { HookChannel } from '../../../src/coordinator/turns/hook-channel.js';
import type { HookMessage } from '../../../src/core/turns/hook-message.js';
import { makeRepo, tempDir } from '../../helpers/repo.js';
import { type SshMachines, startSshMachines } from '../../helpers/sshd.js';

// An agent's turn end reaches the coordinator from a machine: the coordinator's socket of
// that machine forwarded over the machine's shared connection (`ssh -R` on a socket path)
// into a 0700 folder there; and that socket takes only the lanes of its own machine.

const SIDE = join(import.meta.dirname, '..', '..', '..', 'dist', 'lanes', 'machine.js');

function ask(path: string, line: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path);
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
    socket.write(`${line}\n`);
  });
}

const message = (task: string): HookMessage => ({
  v: 1,
  kind: 'session',
  agent: 'claude',
  task,
  run_id: 'run-1',
  attempt: 1,
  token: 'x'.repeat(24),
  cwd: '/nowhere',
  session_id: null,
  last_message: null,
});

describe('the hook socket of a machine', () => {
  let fixture: SshMachines;
  let pool: MachinePool;
  beforeAll(async () => {
    fixture = await startSshMachines(1);
    const repo = await makeRepo();
    pool = await MachinePool.open(
      {
        machines: [{ name: 'm1', ssh: 'm1', slots: 1 }],
        sshCommand: fixture.sshCommand,
        machineTimeoutMs: 20_000,
        stateDir: join(repo, '.git', 'lanes'),
        repoRoot: repo,
        sideScript: SIDE,
        needsHook: true,
      },
      ['sh'],
    );
  }, 60_000);
  afterAll(async () => {
    await pool?.close();
    await fixture?.close();
  }, 30_000);

  it('is forwarded to <root>/sock/<batch>.sock in a 0700 folder, and answers from there', async () => {
    expect(pool.currentViews()).toEqual([{ name: 'm1', slots: 1, state: 'ready' }]);
    const local = join(tempDir(), 'hook.sock');
    const server = createServer((s) => s.on('data', (d) => s.end(`heard ${d.toString('utf8').trim()}\n`)));
    await new Promise<void>((resolve) => server.listen(local, resolve));
    try {
      await pool.forwardHook('m1', 'b1', local);
      const m = fixture.machines[0]!;
      const root = join(m.home, '.cache', 'lanes');
      expect(statSync(join(root, 'sock')).mode & 0o777).toBe(0o700);
      const script =
        "const s=require('net').createConnection(process.argv[1]);let a='';s.on('data',d=>a+=d);s.on('end',()=>process.stdout.write(a));s.write('turn-end\\n')";
      const r = await fixture.ssh(m, `node -e "${script}" ${join(root, 'sock', 'b1.sock')}`);
      expect(r.stdout.trim(), r.stderr).toBe('heard turn-end');
      expect(pool.hookArgv('m1')).toEqual(['node', `${root}/machine.js`, 'hook']);
    } finally {
      server.close();
    }
  });
});

describe("a machine's socket on the coordinator", () => {
  it('refuses a message that names a lane of another machine; its own lanes reach the channel', async () => {
    const heard: string[] = [];
    const refused: string[] = [];
    const channel = new HookChannel(
      async (m) => {
        heard.push(m.task);
        return { verdict: 'noted' };
      },
      (problem) => refused.push(problem),
    );
    const onMachine: Record<string, string> = { a1: 'm1', b1: 'm2' };
    try {
      await channel.open(`test-${process.pid}-${Date.now()}`);
      const m1 = await channel.openFor('k', 'm1', (m) =>
        onMachine[m.task] === 'm1' ? null : `${m.task} is not a lane of machine m1`,
      );
      expect(m1).not.toBe(channel.socketPath);
      expect(JSON.parse(await ask(m1, JSON.stringify(message('b1'))))).toEqual({
        verdict: 'refused',
        reason: 'b1 is not a lane of machine m1',
      });
      expect(JSON.parse(await ask(m1, JSON.stringify(message('a1'))))).toEqual({ verdict: 'noted' });
      expect(heard).toEqual(['a1']);
      expect(refused).toEqual(['b1 is not a lane of machine m1']);
    } finally {
      await channel.close();
    }
  });
});

describe('a machine whose sshd refuses socket forwards', () => {
  it('is left out at the start when agents run (their hook needs it), and taken for scripts', async () => {
    const fixture = await startSshMachines(1, { forwarding: false });
    const repo = await makeRepo();
    try {
      const open = (needsHook: boolean) =>
        MachinePool.open(
          {
            machines: [{ name: 'm1', ssh: 'm1', slots: 1 }],
            sshCommand: fixture.sshCommand,
            machineTimeoutMs: 20_000,
            stateDir: join(repo, '.git', 'lanes'),
            repoRoot: repo,
            sideScript: SIDE,
            needsHook,
          },
          ['sh'],
        );
      const agents = await open(true);
      const [view] = agents.currentViews();
      await agents.close();
      expect(view).toMatchObject({ name: 'm1', state: 'left out' });
      expect(view!.reason).toContain('refuses a socket forward');
      const scripts = await open(false);
      expect(scripts.currentViews()[0]!.state).toBe('ready');
      await scripts.close();
    } finally {
      await fixture.close();
    }
  }, 60_000);
});
