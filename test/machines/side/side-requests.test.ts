import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/repo.js';
import { runSide, SIDE } from './side.js';

// What the side script does with a request it cannot run: exit 2, one answer line with
// code bad_request and a message naming what is wrong, and nothing written on the machine.
// And the bundle itself: what a machine gets, without the terminal's native parts.

describe('the side script: requests it cannot run', () => {
  const cases: [string, string, RegExp][] = [
    ['not JSON', '{"op": "hello",', /the request is not JSON/],
    ['an unknown op', JSON.stringify({ op: 'wt.destroy', root: '/x', args: {} }), /op: .*expected one of/],
    [
      'a relative root',
      JSON.stringify({ op: 'hello', root: 'cache/lanes', args: {} }),
      /root: must be an absolute path/,
    ],
    [
      'a field of the op missing',
      JSON.stringify({
        op: 'wt.add',
        root: '/x',
        repo: 'r-1',
        args: { path: '/x/lanes/a', branch: 'lane/b/a', base: 'HEAD' },
      }),
      /wt\.add: args\.branchExists: required/,
    ],
    [
      'a field the op does not take',
      JSON.stringify({ op: 'wt.list', root: '/x', repo: 'r-1', args: { force: true } }),
      /wt\.list: args: unknown field "force"|wt\.list: args.*force/,
    ],
    [
      'a repository id with a path in it',
      JSON.stringify({ op: 'wt.list', root: '/x', repo: '../../etc', args: {} }),
      /repo: must be a repository id/,
    ],
    [
      'an env name a shell would read',
      JSON.stringify({
        op: 'session.start',
        root: '/x',
        args: { name: 'n', cwd: '/x', argv: ['true'], env: { 'A;B': '1' }, log: '/x/l', status: '/x/s' },
      }),
      /session\.start: args\.env\.A;B: must be an environment name/,
    ],
  ];
  for (const [what, input, message] of cases)
    it(`${what}: exit 2 and bad_request naming it`, async () => {
      const raw = await runSide(input);
      expect(raw.exitCode).toBe(2);
      expect(raw.answer).toMatchObject({ ok: false, code: 'bad_request' });
      expect(raw.answer?.message).toMatch(message);
      expect(raw.stdout.trim().split('\n')).toHaveLength(1);
    });

  it('writes nothing for a bad request (not even its root)', async () => {
    const root = join(tempDir('lanes-side-'), 'root');
    const raw = await runSide(
      JSON.stringify({ op: 'wt.add', root, repo: 'r-1', args: { path: 'relative' } }),
    );
    expect(raw.exitCode).toBe(2);
    expect(raw.answer?.message).toMatch(/args\.path: must be an absolute path/);
    expect(existsSync(root)).toBe(false);
  });

  it('names the op a repository is missing for', async () => {
    const root = join(tempDir('lanes-side-'), 'root');
    const raw = await runSide(JSON.stringify({ op: 'wt.list', root, args: {} }));
    expect(raw.exitCode).toBe(2);
    expect(raw.answer).toMatchObject({ ok: false, code: 'bad_request' });
    expect(raw.answer?.message).toMatch(/wt\.list: the request names no repository/);
  });

  it('an unknown command: usage and exit 2', async () => {
    const raw = await runSide('', ['nonsense']);
    expect(raw.exitCode).toBe(2);
    expect(raw.stderr).toMatch(/usage: node machine\.js op/);
  });
});

describe('serve', () => {
  it('answers each request line with its id until stdin ends, a bad one as bad_request', async () => {
    const home = tempDir('lanes-side-home-');
    const lines = [
      { id: 1, request: { op: 'hello', root: '~/.cache/lanes' } },
      { id: 2, request: { op: 'no.such.op', root: '/tmp' } },
      { id: 3, request: { op: 'hello', root: '~/.cache/lanes' } },
    ];
    const raw = await runSide(lines.map((l) => `${JSON.stringify(l)}\n`).join(''), ['serve'], {
      HOME: home,
    });
    expect(raw.exitCode, raw.stderr).toBe(0);
    const answers = raw.stdout
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as { id: number; answer: { ok: boolean; code?: string; value?: { home?: string } } },
      );
    const byId = new Map(answers.map((a) => [a.id, a.answer]));
    expect([...byId.keys()].sort()).toEqual([1, 2, 3]);
    expect(byId.get(1)?.value?.home).toBe(home);
    expect(byId.get(2)).toMatchObject({ ok: false, code: 'bad_request' });
    expect(byId.get(3)?.ok).toBe(true);
  });
});

describe('hello', () => {
  it('makes the root, ~ the home of the user it runs as, its sock/ 0700, and names the programs', async () => {
    const home = tempDir('lanes-side-home-');
    const raw = await runSide(JSON.stringify({ op: 'hello', root: '~/.cache/lanes' }), ['op'], {
      HOME: home,
    });
    expect(raw.exitCode).toBe(0);
    const value = raw.answer?.value as {
      root: string;
      home: string;
      versions: Record<string, string | null>;
    };
    expect(value.root).toBe(join(realpathSync(home), '.cache', 'lanes'));
    expect(value.home).toBe(home);
    expect(statSync(join(value.root, 'sock')).mode & 0o777).toBe(0o700);
    expect(value.versions.git).toMatch(/^\d+\.\d+/);
    expect(value.versions.tmux).toMatch(/^\d+\.\d+/);
    expect(value.versions.node).toBe(process.versions.node);
  });
});

describe('the side bundle', () => {
  it('is one small file without node-pty, ink or react', () => {
    const text = readFileSync(SIDE, 'utf8');
    expect(text).not.toMatch(/node-pty|from\s*["']ink["']|from\s*["']react["']|react-reconciler/);
    // (its only imports are Node's own modules: nothing to install on a machine)
    const imports = [...text.matchAll(/\bfrom\s*["']([^"']+)["']/g)].map((m) => m[1] as string);
    expect(imports.filter((spec) => !spec.startsWith('node:'))).toEqual([]);
    expect(statSync(SIDE).size).toBeLessThan(400 * 1024);
  });
});
