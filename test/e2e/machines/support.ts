import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { git } from '../../helpers/repo.js';
import { afterAll, beforeAll } from 'vitest';
import { type SshMachines, startSshMachines } from '../../helpers/sshd.js';
import { leanRepo, writePlan } from '../reliability/support.js';

// What the batches on machines (test/helpers/sshd.ts) share: a repository whose config names
// the fixture's machines, plans of children that write who ran them, and what a batch left
// on the machines (lane folders, tmux sessions).

/** A repository whose lanes.config.json has `machines` (the fixture's, `slots` each, unless given) and `more`. */
export async function machineRepo(
  fixture: SshMachines,
  options: { slots?: number; machines?: object[]; more?: object } = {},
): Promise<string> {
  const repo = await leanRepo();
  const machines =
    options.machines ??
    fixture.machines.map((m) => ({ name: m.name, ssh: m.name, slots: options.slots ?? 3 }));
  writeFileSync(
    join(repo, 'lanes.config.json'),
    `${JSON.stringify({ machines, ssh_command: fixture.sshCommand, ...options.more })}\n`,
  );
  await git(repo, 'add', 'lanes.config.json');
  await git(repo, 'commit', '-q', '-m', 'machines');
  return repo;
}

/** Children that write who ran them into `who/<id>.txt`, then run `after` (e.g. wait for ever). */
export function whoPlan(batch: string, children: string[], maxParallel: number, after = ''): string {
  return writePlan({
    batch,
    executor: 'script',
    max_parallel: maxParallel,
    children: children.map((id) => ({
      id,
      goal: `write who ran ${id}${after ? ', then wait' : ''}`,
      scope: [`who/${id}.txt`],
      acceptance: [{ id: 'written', run: ['test', '-s', `who/${id}.txt`] }],
      run: `mkdir -p who && id -un > who/${id}.txt${after}`,
    })),
  });
}

/** Appended to a child's run: it waits for ever (until it is stopped). */
export const WAIT_FOREVER = ' && while :; do sleep 0.1; done';

/** The lane folders and tmux sessions of any batch left on the fixture's machines. */
export async function leftOnMachines(fixture: SshMachines): Promise<string[]> {
  const left: string[] = [];
  for (const m of fixture.machines) {
    const walk = (dir: string, depth: number): void => {
      if (!existsSync(dir)) return;
      for (const name of readdirSync(dir)) {
        if (depth === 0) left.push(join(dir, name));
        else walk(join(dir, name), depth - 1);
      }
    };
    walk(join(m.home, '.cache', 'lanes', 'lanes'), 3); // (<machine>/<repo>/<batch>/<child>)
    const tmux = await execa('tmux', ['-L', 'lanes', 'list-sessions'], {
      reject: false,
      env: { TMUX_TMPDIR: '/tmp' },
      uid: m.uid,
    });
    if (tmux.exitCode === 0 && String(tmux.stdout).trim())
      left.push(`${m.name}: tmux ${String(tmux.stdout)}`);
  }
  return left;
}

/**
 * Two machines (sshd of their own, a Unix user each: test/helpers/sshd.ts) for the tests of
 * one file: made before the first, removed after the last.
 */
export function machinesForFile(count = 2): { readonly fixture: SshMachines } {
  const held = { fixture: undefined as unknown as SshMachines };
  beforeAll(async () => {
    held.fixture = await startSshMachines(count);
  }, 60_000);
  afterAll(async () => {
    await held.fixture?.close();
  }, 30_000);
  return held;
}
