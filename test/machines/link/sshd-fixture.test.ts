import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeRepo } from '../../helpers/repo.js';
import { processesOf, type SshMachines, startSshMachines } from '../../helpers/sshd.js';

// The fixture the machine tests stand on: two machines of real OpenSSH, each its own user,
// reachable with BatchMode through the test's own client config, unable to read the
// coordinator's repository, and gone without a trace after.

describe('two sshd machines', () => {
  let fixture: SshMachines;
  let repo: string;
  beforeAll(async () => {
    fixture = await startSshMachines(2);
    repo = await makeRepo({ 'secret.txt': 'coordinator only\n' });
  }, 60_000);
  afterAll(async () => {
    await fixture?.close();
  }, 30_000);

  it('answers as its own user in its own home, with git, node and tmux', async () => {
    const [m1, m2] = fixture.machines;
    const one = await fixture.ssh(m1!, 'id -un; echo "$HOME"; git --version; node --version; tmux -V');
    expect(one.exitCode, one.stderr).toBe(0);
    const lines = one.stdout.split('\n');
    expect(lines[0]).toBe(m1!.user);
    expect(lines[1]).toBe(m1!.home);
    expect(lines[2]).toMatch(/^git version /);
    expect(lines[3]).toMatch(/^v\d+\./);
    expect(lines[4]).toMatch(/^tmux /);
    const two = await fixture.ssh(m2!, 'id -un');
    expect(two.stdout).toBe(m2!.user);
    expect(m1!.user).not.toBe(m2!.user);
    expect(m1!.address).not.toBe(m2!.address);
  });

  it('cannot read the coordinator repository', async () => {
    expect(statSync(join(repo, '..')).mode & 0o077).toBe(0);
    const r = await fixture.ssh(fixture.machines[0]!, `cat ${join(repo, 'secret.txt')}`);
    expect(r.exitCode).not.toBe(0);
    expect(r.stdout).not.toContain('coordinator only');
  });

  it('refuses a host key it does not know (no StrictHostKeyChecking=no)', async () => {
    const { readFileSync } = await import('node:fs');
    expect(readFileSync(fixture.configPath, 'utf8')).not.toMatch(/StrictHostKeyChecking/i);
  });
});

describe('closing the machines', () => {
  it('leaves no process, no user and no home', async () => {
    const fixture = await startSshMachines(1);
    const m = fixture.machines[0]!;
    // Something of the user's own that would outlive the ssh session.
    const r = await fixture.ssh(
      m,
      'tmux -L lanes new-session -d -s left sleep 600; (sleep 600 >/dev/null 2>&1 &) ; echo ok',
    );
    expect(r.stdout).toBe('ok');
    expect((await processesOf(m.user)).length).toBeGreaterThan(0);
    await fixture.close();
    expect(await processesOf(String(m.uid))).toEqual([]);
    expect(existsSync(m.home)).toBe(false);
    const { execa } = await import('execa');
    expect((await execa('id', [m.user], { reject: false })).exitCode).not.toBe(0);
  }, 60_000);
});
