import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MachineLink } from '../../../src/machines/link/machine-link.js';
import { MachineObjects } from '../../../src/machines/link/objects.js';
import { shellLine } from '../../../src/machines/link/shell-quote.js';
import { SshConnection } from '../../../src/machines/link/ssh-connection.js';
import { git, makeRepo, tempDir } from '../../helpers/repo.js';
import { type SshMachines, startSshMachines } from '../../helpers/sshd.js';
import { until } from '../../helpers/until.js';

// The link's ssh layer against real OpenSSH: one shared connection a machine, every word
// reaching the remote shell as it was sent, a dropped connection made again, and objects
// moved both ways with git over that same connection.

function hostile(canary: string, n: number): string {
  return `$(touch ${canary}-${n}a) \`touch ${canary}-${n}b\`; touch ${canary}-${n}c && ../../etc/passwd "'`;
}

describe('the ssh link', () => {
  let fixture: SshMachines;
  let state: string;
  const connections: SshConnection[] = [];
  const connect = (i: number, retryForMs = 20_000) => {
    const m = fixture.machines[i]!;
    const c = new SshConnection(
      {
        name: m.name,
        destination: m.name,
        sshCommand: fixture.sshCommand,
        controlPath: join(state, 'ssh', `${m.name}-${connections.length}`),
      },
      retryForMs,
    );
    connections.push(c);
    return c;
  };
  beforeAll(async () => {
    fixture = await startSshMachines(2);
    state = tempDir('lanes-link-');
  }, 60_000);
  afterAll(async () => {
    for (const c of connections) await c.close();
    await fixture?.close();
  }, 30_000);

  it('sends every word byte for byte, the plan-string canaries included', async () => {
    const m = fixture.machines[0]!;
    const canary = join(m.home, 'CANARY');
    const words = [
      hostile(canary, 1),
      `line one\nline two ${hostile(canary, 2)}`,
      "it's",
      "''",
      '',
      ' leading and trailing ',
      '~',
      '*',
      '$HOME',
      '-n',
      '\\',
      '!event',
      'ünïcødé ✓',
      '\t\r',
    ];
    const c = connect(0);
    const r = await c.run(shellLine(['printf', '%s\\0', ...words]));
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe(words.map((w) => `${w}\0`).join(''));
    expect(readdirSync(m.home).filter((f) => f.startsWith('CANARY'))).toEqual([]);
    expect(() => shellLine(['a\0b'])).toThrow(/NUL/);
  });

  it('shares one connection among the commands of a machine', async () => {
    const c = connect(1);
    const seen = await Promise.all(
      Array.from({ length: 6 }, () => c.run('echo "$SSH_CONNECTION"').then((r) => r.stdout.trim())),
    );
    expect(new Set(seen).size).toBe(1);
    expect(statSync(join(state, 'ssh')).mode & 0o077).toBe(0);
  });

  it('makes a dropped connection again, and names a machine that stays away', async () => {
    const m = fixture.machines[1]!;
    const c = connect(1, 3_000);
    expect((await c.run('id -un')).stdout.trim()).toBe(m.user);
    const first = c.masterPid!;
    process.kill(first, 'SIGKILL');
    expect((await c.run('id -un')).stdout.trim()).toBe(m.user);
    expect(c.masterPid).not.toBe(first);
    expect(c.state).toBe('connected');
    // The machine goes away: no sshd to connect to, and the connection there drops.
    await fixture.stopSshd(m);
    process.kill(c.masterPid!, 'SIGKILL');
    await expect(c.run('true')).rejects.toMatchObject({ code: 'machine_unreachable' });
    expect(c.state).toBe('reconnecting');
    await fixture.startSshd(m);
    expect((await c.run('id -un')).stdout.trim()).toBe(m.user);
    expect(c.state).toBe('connected');
  }, 60_000);

  it('copies the side script once, and moves commits both ways over the connection', async () => {
    const m = fixture.machines[0]!;
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const side = join(tempDir(), 'machine.js');
    writeFileSync(side, '// side script stand-in\n');
    const link = new MachineLink(m.name, connect(0), {
      sideScript: side,
      root: '~/.cache/lanes',
      repo: 'repo-0123456789ab',
    });
    await link.prepare();
    expect(link.root).toBe(`${m.home}/.cache/lanes`);
    const copied = join(link.root, 'machine.js');
    expect(existsSync(copied)).toBe(true);
    const before = statSync(copied).mtimeMs;
    await link.prepare();
    expect(statSync(copied).mtimeMs).toBe(before);
    expect(statSync(link.root).mode & 0o077).toBe(0);

    const objects = new MachineObjects(repo, link);
    const head = (await git(repo, 'rev-parse', 'HEAD')).trim();
    await objects.push([head]);
    const there = await fixture.ssh(m, `git --git-dir=${link.cachePath} rev-parse refs/lanes/in/${head}`);
    expect(there.stdout.trim()).toBe(head);
    // A commit made on the machine comes back under the machine's refs.
    const made = await fixture.ssh(
      m,
      `cd ${link.cachePath} && t=$(git rev-parse ${head}^{tree}) && c=$(echo remote | GIT_AUTHOR_NAME=r GIT_AUTHOR_EMAIL=r@x GIT_COMMITTER_NAME=r GIT_COMMITTER_EMAIL=r@x git commit-tree $t -p ${head}) && git update-ref refs/heads/lane/b1/c1 $c && echo $c`,
    );
    const commit = made.stdout.trim();
    expect(commit).toMatch(/^[0-9a-f]{40}$/);
    await objects.fetch(commit, 'b1', 'c1');
    expect((await git(repo, 'rev-parse', 'refs/lanes/machines/m1/b1/c1')).trim()).toBe(commit);
    expect((await git(repo, 'log', '-1', '--format=%s', commit)).trim()).toBe('remote');
  }, 60_000);

  it("sets the machine's env for its ops, word for word", async () => {
    const m = fixture.machines[1]!;
    const side = join(import.meta.dirname, '..', '..', '..', 'dist', 'lanes', 'machine.js');
    const value = `a b'c $(touch ${m.home}/CANARY-env)`;
    const link = new MachineLink(m.name, connect(1), {
      sideScript: side,
      root: '~/.cache/lanes',
      repo: 'repo-0123456789ab',
      env: { LANES_TEST_VAR: value },
    });
    await link.connect();
    const { logs } = await link.call<{ logs: Record<string, string> }>('qa.runChecks', {
      cwd: link.root,
      checks: [{ id: 'env', run: ['sh', '-c', 'printf "<%s>" "$LANES_TEST_VAR"'] }],
    });
    expect(logs.env).toContain(`<${value}>`);
    expect(readdirSync(m.home).filter((f) => f.startsWith('CANARY'))).toEqual([]);
  }, 60_000);

  it('answers every op of a machine from one side process there, and goes on when the connection drops', async () => {
    const m = fixture.machines[0]!;
    const c = connect(0);
    const link = new MachineLink(m.name, c, {
      sideScript: join(import.meta.dirname, '..', '..', '..', 'dist', 'lanes', 'machine.js'),
      root: '~/.cache/lanes',
      repo: 'repo-0123456789ab',
    });
    await link.connect();
    // (a check's parent is the side process that ran it)
    const sidePid = async () => {
      const { logs } = await link.call<{ logs: Record<string, string> }>('qa.runChecks', {
        cwd: link.root,
        checks: [{ id: 'parent', run: ['sh', '-c', 'echo "<$PPID>"'] }],
      });
      return /<(\d+)>/.exec(logs.parent ?? '')?.[1];
    };
    const pids = await Promise.all(Array.from({ length: 6 }, sidePid));
    expect(pids.every((pid) => pid !== undefined)).toBe(true);
    expect(new Set(pids).size).toBe(1);
    process.kill(c.masterPid!, 'SIGKILL');
    expect(await sidePid()).toMatch(/^\d+$/);
    await link.close();
    await until(
      async () => !(await fixture.ssh(m, 'ps -u "$(id -u)" -o args=')).stdout.includes('machine.js serve'),
      'no side process left there',
      { timeoutMs: 10_000, everyMs: 100 },
    );
  }, 60_000);
});
