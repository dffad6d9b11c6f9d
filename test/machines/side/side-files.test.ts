import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sessionName } from '../../../src/machines/protocol.js';
import { until } from '../../helpers/until.js';
import { batchId, machine, tmuxNames } from './side.js';

// Files put on and read from a machine, a checkout readied there (the copied files and the
// setup commands, their logs back in the answer), and a session ended on request.

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const clean of cleanups.splice(0)) await clean();
});

describe('the side script: files, setup and ending a session', () => {
  it('writes a file whole with its mode, reads it from an offset, and refuses a path outside its root', async () => {
    const m = machine('repo-000000000003');
    const path = join(m.root, 'runs', 'b', 'a', 'prompt.txt');
    const bytes = Buffer.from('héllo\nworld\n');
    await m.call('file.write', { path, base64: bytes.toString('base64'), mode: 0o600 });
    await m.call('file.write', { path, base64: bytes.toString('base64'), mode: 0o600 }); // (again: the same)
    expect(readFileSync(path)).toEqual(bytes);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const tail = await m.call('file.read', { path, offset: 7, max: 3 });
    expect(tail).toEqual({ base64: bytes.subarray(7, 10).toString('base64'), size: bytes.length });
    expect(await m.call('file.read', { path: join(m.root, 'none.txt') })).toBeNull();
    const outside = join(m.root, '..', 'outside.txt');
    await expect(m.call('file.write', { path: outside, base64: '' })).rejects.toThrow(
      /bad_request.*outside the root/,
    );
    expect(existsSync(outside)).toBe(false);
  });

  it('readies a checkout: the files copied, the setup run, its log back; a failing setup says why', async () => {
    const m = machine('repo-000000000004');
    const dir = join(m.root, 'lanes', 'm1', m.repo, 'b', 'a');
    mkdirSync(dir, { recursive: true });
    const env = Buffer.from('SECRET=1\n').toString('base64');
    const ready = await m.call('qa.prepare', {
      dir,
      copy: [{ path: 'conf/.env', base64: env, mode: 0o600 }],
      setup: ['cat conf/.env > seen.txt; echo set-up', ['sh', '-c', 'echo second']],
    });
    expect(ready).toEqual({ why: null, logs: { 'setup-1': 'set-up\n', 'setup-2': 'second\n' } });
    expect(readFileSync(join(dir, 'seen.txt'), 'utf8')).toBe('SECRET=1\n');
    expect(statSync(join(dir, 'conf/.env')).mode & 0o777).toBe(0o600);
    const failed = await m.call('qa.prepare', { dir, copy: [], setup: ['echo broken; exit 4'] });
    expect(failed.why).toMatch(/^setup command 1 exited 4:\nbroken/);
    expect(failed.logs['setup-1']).toBe('broken\n');
  });

  it('ends a session on request (asked twice: the second finds it gone)', async () => {
    const m = machine('repo-000000000005');
    const batch = batchId('k');
    cleanups.push(() => m.call('batch.clean', { batch }));
    const name = sessionName(batch, 'a', 'run-x', 1);
    const run = join(m.root, 'runs', batch, 'a');
    mkdirSync(run, { recursive: true });
    writeFileSync(join(run, 'x'), '');
    await m.call('session.start', {
      name,
      cwd: run,
      argv: ['sleep', '600'],
      env: {},
      log: join(run, 'attempt-1.log'),
      status: join(run, 'attempt-1.status'),
    });
    expect(await m.call('session.list', { prefix: name })).toEqual([{ name, running: true, exit: null }]);
    await m.call('session.kill', { name });
    await m.call('session.kill', { name });
    expect(tmuxNames()).not.toContain(name);
    await until(
      async () => (await m.call('session.list', { prefix: name }))[0]?.running === false,
      'the session to be reported ended',
    );
  });
});
