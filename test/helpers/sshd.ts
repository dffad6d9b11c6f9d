import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { execa } from 'execa';
import { tempDir } from './repo.js';
import { until } from './until.js';

// Two (or more) machines for the tests of lanes on machines, made of real OpenSSH on this
// one: each a Unix user of its own (its own home, made here and removed after), an sshd of
// its own on a loopback address and a free port, host keys and a client key made here, and
// a client config (`ssh -F`) that knows those host keys (the user's ssh config is never
// weakened: no StrictHostKeyChecking=no, BatchMode). The base folder is 0700 (mkdtemp), so
// the machines' users cannot read the coordinator's repositories the tests make in it.

export interface SshMachine {
  /** The Host alias in the client config: what `ssh` takes as a destination. */
  name: string;
  user: string;
  uid: number;
  home: string;
  address: string;
  port: number;
}

export interface SshMachines {
  machines: SshMachine[];
  /** The client config (`ssh -F <configPath>`). */
  configPath: string;
  /** The `ssh_command` of lanes.config.json for these machines. */
  sshCommand: string[];
  /** Runs `remote` (one shell line) on a machine as its user; never throws. */
  ssh(machine: SshMachine, remote: string): Promise<{ exitCode: number; stdout: string; stderr: string }>;
  /** Kills the listening sshd of a machine (connections made stay up); `startSshd` brings it back on the same port (nothing while it runs). */
  stopSshd(machine: SshMachine): Promise<void>;
  startSshd(machine: SshMachine): Promise<void>;
  /** Every connection made to a machine dropped (its user's sshd processes killed; tmux and what it runs go on). */
  dropConnections(machine: SshMachine): Promise<void>;
  /** Every process of the machines' users killed, the sshd stopped, the users and homes removed. */
  close(): Promise<void>;
}

const ADDRESSES = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5'];

async function freePort(address: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, address, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * The pids of every process of `user` (a name, or a uid once the user is gone) that still
 * runs. A zombie has ended: it only waits for its parent (init here, for an sshd session
 * whose parent went first) to read its exit, so it is not counted.
 */
export async function processesOf(user: string): Promise<number[]> {
  const r = await execa('pgrep', ['-u', user], { reject: false });
  return String(r.stdout)
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map(Number)
    .filter((pid) => !isZombie(pid));
}

function isZombie(pid: number): boolean {
  try {
    // (the state follows the command name in parentheses, which may itself hold spaces)
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true; // (gone meanwhile)
  }
}

/** The sshd processes of `user` (one a connection: `sshd: <user>@notty`, or `sshd-session` since 9.8). */
async function sshdSessionsOf(user: string): Promise<number[]> {
  const r = await execa('pgrep', ['-u', user, '^sshd'], { reject: false });
  return String(r.stdout)
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map(Number);
}

async function dropConnections(machine: SshMachine): Promise<void> {
  await until(
    async () => {
      const pids = await sshdSessionsOf(machine.user);
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone already
        }
      }
      return pids.length === 0;
    },
    `no connection to ${machine.name}`,
    { timeoutMs: 10_000, everyMs: 50 },
  );
}

async function killProcessesOf(user: string): Promise<void> {
  // By pid, every process of the user this fixture made (nothing else runs as it).
  await until(
    async () => {
      const pids = await processesOf(user);
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone already
        }
      }
      return pids.length === 0;
    },
    `no process of ${user}`,
    { timeoutMs: 10_000, everyMs: 50 },
  );
}

/** `forwarding` false: the sshd refuses socket forwards (as a locked-down one would). */
export async function startSshMachines(count = 2, { forwarding = true } = {}): Promise<SshMachines> {
  const dir = tempDir('lanes-sshd-');
  chmodSync(dir, 0o700);
  const tag = `${process.pid.toString(36)}${Date.now().toString(36).slice(-4)}`;
  const machines: SshMachine[] = [];
  const daemons = new Map<string, ChildProcess>();
  const clientKey = join(dir, 'client_key');
  await execa('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'lanes-test', '-f', clientKey]);
  const clientPub = readFileSync(`${clientKey}.pub`, 'utf8');
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const knownHosts: string[] = [];
  const hostBlocks: string[] = [];

  const cleanup = async () => {
    for (const machine of machines) await stopSshd(machine).catch(() => undefined);
    for (const machine of machines) {
      await killProcessesOf(machine.user);
      await execa('userdel', ['-r', '-f', machine.user], { reject: false });
      rmSync(machine.home, { recursive: true, force: true });
      rmSync(`/tmp/tmux-${machine.uid}`, { recursive: true, force: true });
    }
  };

  const sshdConfig = (machine: SshMachine) => join(dir, `sshd_${machine.name}.conf`);

  async function startSshd(machine: SshMachine): Promise<void> {
    const running = daemons.get(machine.name);
    if (running && running.exitCode === null && running.signalCode === null) return; // (one a machine)
    const log = openSync(join(dir, `sshd_${machine.name}.log`), 'a');
    const child = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', sshdConfig(machine)], {
      stdio: ['ignore', log, log],
    });
    closeSync(log);
    daemons.set(machine.name, child);
    await until(
      async () => (await ssh(machine, 'true')).exitCode === 0,
      `the sshd of ${machine.name} to answer`,
      {
        timeoutMs: 15_000,
        everyMs: 100,
        detail: () => readFileSync(join(dir, `sshd_${machine.name}.log`), 'utf8'),
      },
    );
  }

  async function stopSshd(machine: SshMachine): Promise<void> {
    const child = daemons.get(machine.name);
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await gone;
    daemons.delete(machine.name);
  }

  const configPath = join(dir, 'ssh_config');
  const sshCommand = ['ssh', '-F', configPath];
  async function ssh(machine: SshMachine, remote: string) {
    const r = await execa(
      sshCommand[0]!,
      [...sshCommand.slice(1), '-o', 'BatchMode=yes', machine.name, remote],
      {
        reject: false,
        stdin: 'ignore',
      },
    );
    return { exitCode: r.exitCode ?? -1, stdout: String(r.stdout), stderr: String(r.stderr) };
  }

  try {
    for (let i = 0; i < count; i++) {
      const name = `m${i + 1}`;
      const user = `lt${tag}${i + 1}`.slice(0, 31);
      const home = `/home/${user}`;
      await execa('useradd', ['-m', '-d', home, '-s', '/bin/sh', '-p', '*', user]);
      const uid = Number((await execa('id', ['-u', user])).stdout);
      const address = ADDRESSES[i]!;
      const machine: SshMachine = { name, user, uid, home, address, port: await freePort(address) };
      machines.push(machine);
      mkdirSync(join(home, '.ssh'), { mode: 0o700 });
      writeFileSync(join(home, '.ssh', 'authorized_keys'), clientPub, { mode: 0o600 });
      await execa('chown', ['-R', `${user}:${user}`, join(home, '.ssh')]);
      const hostKey = join(dir, `host_${name}`);
      await execa('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', hostKey]);
      const hostPub = readFileSync(`${hostKey}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ');
      knownHosts.push(`[${address}]:${machine.port} ${hostPub}`);
      writeFileSync(
        sshdConfig(machine),
        [
          `ListenAddress ${address}:${machine.port}`,
          `HostKey ${hostKey}`,
          `PidFile ${join(dir, `sshd_${name}.pid`)}`,
          'AuthorizedKeysFile .ssh/authorized_keys',
          'PubkeyAuthentication yes',
          'PasswordAuthentication no',
          'KbdInteractiveAuthentication no',
          'UsePAM no',
          'PermitRootLogin no',
          `AllowUsers ${user}`,
          `AllowStreamLocalForwarding ${forwarding ? 'yes' : 'no'}`,
          'StreamLocalBindUnlink yes',
          // (sshd applies AllowTcpForwarding to a remote socket forward too: the hook's `-R` needs remote)
          'AllowTcpForwarding remote',
          'X11Forwarding no',
          // Every op of lanes is a session on the one shared connection.
          'MaxSessions 64',
          'MaxStartups 64',
          'LogLevel ERROR',
          '',
        ].join('\n'),
        { mode: 0o600 },
      );
      hostBlocks.push(
        [
          `Host ${name}`,
          `  HostName ${address}`,
          `  Port ${machine.port}`,
          `  User ${user}`,
          `  IdentityFile ${clientKey}`,
          '  IdentitiesOnly yes',
          `  UserKnownHostsFile ${join(dir, 'known_hosts')}`,
          '  GlobalKnownHostsFile /dev/null',
          '  LogLevel ERROR',
          '',
        ].join('\n'),
      );
    }
    writeFileSync(join(dir, 'known_hosts'), `${knownHosts.join('\n')}\n`, { mode: 0o600 });
    writeFileSync(configPath, hostBlocks.join('\n'), { mode: 0o600 });
    for (const machine of machines) await startSshd(machine);
  } catch (error) {
    await cleanup();
    throw error;
  }

  return {
    machines,
    configPath,
    sshCommand,
    ssh,
    stopSshd,
    startSshd,
    dropConnections,
    async close() {
      await cleanup();
      for (const machine of machines) {
        const left = await processesOf(String(machine.uid));
        if (left.length) throw new Error(`processes of ${machine.user} left: ${left.join(' ')}`);
      }
    },
  };
}
