import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { execa } from 'execa';
import { tempDir } from './fixtures.js';

// One machine of real OpenSSH on this one for the remote-lane figures: a Unix user of its
// own (made here, removed after), an sshd of its own on 127.0.0.2 and a free port, a host
// key and a client key made here, a client config (`ssh -F`) that knows the host key
// (BatchMode, nothing of the user's ssh config weakened). The bench's own small version of
// test/helpers/sshd.ts (bench/ does not import test/): one machine, no stop/start.

export interface BenchMachine {
  name: string;
  user: string;
  uid: number;
  home: string;
  /** The `ssh_command` of lanes.config.json for this machine. */
  sshCommand: string[];
  configPath: string;
  /** The processes of the machine's user now (pids), zombies left out. */
  processes(): Promise<{ pid: number; args: string }[]>;
  close(): Promise<void>;
}

/** Why this machine cannot be made here, or null when it can. */
export function cannotMakeMachine(): string | null {
  if (process.getuid?.() !== 0) return 'needs root to make a machine user';
  try {
    readFileSync('/usr/sbin/sshd');
  } catch {
    return 'needs /usr/sbin/sshd (openssh-server)';
  }
  return null;
}

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

async function processesOf(user: string): Promise<{ pid: number; args: string }[]> {
  const r = await execa('ps', ['-u', user, '-o', 'pid=,stat=,args='], { reject: false });
  return String(r.stdout)
    .split('\n')
    .map((line) => line.trim().match(/^(\d+)\s+(\S+)\s+(.*)$/))
    .filter((m): m is RegExpMatchArray => m !== null && !m[2]!.startsWith('Z'))
    .map((m) => ({ pid: Number(m[1]), args: m[3]! }));
}

export async function startBenchMachine(name = 'm1', address = '127.0.0.2'): Promise<BenchMachine> {
  const dir = tempDir('lanes-bench-sshd-');
  chmodSync(dir, 0o700);
  const user = `lb${process.pid.toString(36)}${Date.now().toString(36).slice(-4)}`.slice(0, 31);
  const home = `/home/${user}`;
  const clientKey = join(dir, 'client_key');
  const hostKey = join(dir, 'host_key');
  const configPath = join(dir, 'ssh_config');
  const sshdConfig = join(dir, 'sshd.conf');
  const log = join(dir, 'sshd.log');
  let daemon: ChildProcess | null = null;
  let uid = -1;

  const close = async () => {
    if (daemon && daemon.exitCode === null && daemon.signalCode === null) {
      const gone = new Promise<void>((resolve) => daemon!.once('exit', () => resolve()));
      daemon.kill('SIGKILL');
      await gone;
    }
    // By pid, every process of the user made here (nothing else runs as it).
    for (let i = 0; i < 100; i++) {
      const left = await processesOf(user);
      if (!left.length) break;
      for (const { pid } of left) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone already
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await execa('userdel', ['-r', '-f', user], { reject: false });
    rmSync(home, { recursive: true, force: true });
    if (uid >= 0) rmSync(`/tmp/tmux-${uid}`, { recursive: true, force: true });
  };

  try {
    await execa('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'lanes-bench', '-f', clientKey]);
    await execa('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', hostKey]);
    await execa('useradd', ['-m', '-d', home, '-s', '/bin/sh', '-p', '*', user]);
    uid = Number((await execa('id', ['-u', user])).stdout);
    mkdirSync(join(home, '.ssh'), { mode: 0o700 });
    writeFileSync(join(home, '.ssh', 'authorized_keys'), readFileSync(`${clientKey}.pub`), { mode: 0o600 });
    await execa('chown', ['-R', `${user}:${user}`, join(home, '.ssh')]);
    mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
    const port = await freePort(address);
    const hostPub = readFileSync(`${hostKey}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ');
    writeFileSync(join(dir, 'known_hosts'), `[${address}]:${port} ${hostPub}\n`, { mode: 0o600 });
    writeFileSync(
      sshdConfig,
      [
        `ListenAddress ${address}:${port}`,
        `HostKey ${hostKey}`,
        `PidFile ${join(dir, 'sshd.pid')}`,
        'AuthorizedKeysFile .ssh/authorized_keys',
        'PubkeyAuthentication yes',
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'UsePAM no',
        'PermitRootLogin no',
        `AllowUsers ${user}`,
        'AllowStreamLocalForwarding yes',
        'StreamLocalBindUnlink yes',
        'AllowTcpForwarding remote',
        'X11Forwarding no',
        'MaxSessions 64',
        'MaxStartups 64',
        'LogLevel ERROR',
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    writeFileSync(
      configPath,
      [
        `Host ${name}`,
        `  HostName ${address}`,
        `  Port ${port}`,
        `  User ${user}`,
        `  IdentityFile ${clientKey}`,
        '  IdentitiesOnly yes',
        `  UserKnownHostsFile ${join(dir, 'known_hosts')}`,
        '  GlobalKnownHostsFile /dev/null',
        '  LogLevel ERROR',
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    const out = openSync(log, 'a');
    daemon = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', sshdConfig], { stdio: ['ignore', out, out] });
    closeSync(out);
    const deadline = Date.now() + 15_000;
    for (;;) {
      const r = await execa('ssh', ['-F', configPath, '-o', 'BatchMode=yes', name, 'true'], {
        reject: false,
        stdin: 'ignore',
      });
      if (r.exitCode === 0) break;
      if (Date.now() > deadline) throw new Error(`sshd did not answer: ${readFileSync(log, 'utf8')}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } catch (error) {
    await close();
    throw error;
  }
  return {
    name,
    user,
    uid,
    home,
    configPath,
    sshCommand: ['ssh', '-F', configPath],
    processes: () => processesOf(user),
    close,
  };
}
