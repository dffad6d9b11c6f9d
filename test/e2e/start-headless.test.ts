import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { partsOf } from '../helpers/module-parts.js';
import { CLI, git, makeRepo, tempDir } from '../helpers/repo.js';

// What `lanes start --yes --headless` of a local batch does before its first tick
// (docs/PERFORMANCE.md "Start-up"): it loads no terminal code and no machine code, and asks
// git no question whose answer git's files already give.

const HOOK = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'module-log.mjs');

/** The marks of code a local headless batch never runs, by the module text that holds them. */
const PARTS: [string, RegExp][] = [
  ["xterm's parser", /"xterm\.js: "/],
  ["the machines' pool", /\bvar MachinePool = class\b|\bclass MachinePool\b/],
];

function planFile(dir: string, batch: string): string {
  const plan = join(dir, `${batch}.json`);
  writeFileSync(
    plan,
    JSON.stringify({
      batch,
      executor: 'script',
      children: [
        {
          id: 'a',
          goal: 'a',
          scope: ['a.txt'],
          acceptance: [{ id: 'ok', run: ['true'] }],
          run: 'echo a > a.txt',
        },
      ],
    }),
  );
  return plan;
}

function journal(repo: string, batch: string): { event: string; path?: string; branch?: string | null }[] {
  const file = join(repo, '.git', 'lanes', 'batches', `${batch}.events.jsonl`);
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { event: string });
}

describe('lanes start --headless of a local batch', () => {
  it('loads neither node-pty, nor xterm’s parser, nor the machines’ modules', async () => {
    const dir = tempDir();
    const repo = await makeRepo();
    const log = join(dir, 'modules.log');
    const r = await execa(
      process.execPath,
      ['--import', HOOK, CLI, '-C', repo, 'start', planFile(dir, 'local'), '--yes', '--headless'],
      { env: { LANES_MODULE_LOG: log, NO_COLOR: '1' }, reject: false, stdin: 'ignore' },
    );
    expect(r.exitCode, String(r.stderr)).toBe(0);
    const urls = readFileSync(log, 'utf8').trim().split('\n');
    expect(urls.some((url) => url.endsWith('/lanes/main.js'))).toBe(true);
    expect(
      urls.flatMap((url) => partsOf(url, PARTS).map((part) => `${part} (${url.split('/').pop()})`)),
    ).toEqual([]);
  });

  it('asks git only what its files cannot tell, and early: a stranger under the lanes root is reported without `git worktree list`, the commits are read by one `cat-file`, the long-lived processes and the identity come before they are waited for', async () => {
    const dir = tempDir();
    const repo = await makeRepo();
    // A worktree the batch does not know, where its lanes go (DESIGN §7: reported, left alone).
    const stranger = join(`${repo}.lanes`, 'strange', 'stranger');
    mkdirSync(dirname(stranger), { recursive: true });
    await git(repo, 'worktree', 'add', '-q', '-b', 'elsewhere', stranger);
    // Every git lanes runs, logged by a git first on PATH.
    const bin = join(dir, 'bin');
    const calls = join(dir, 'git-calls.log');
    mkdirSync(bin);
    const real = (await execa('sh', ['-c', 'command -v git'])).stdout.trim();
    writeFileSync(join(bin, 'git'), `#!/bin/sh\necho "$*" >> '${calls}'\nexec '${real}' "$@"\n`);
    chmodSync(join(bin, 'git'), 0o755);
    const r = await execa(
      process.execPath,
      [CLI, '-C', repo, 'start', planFile(dir, 'strange'), '--yes', '--headless'],
      {
        env: { PATH: `${bin}:${process.env.PATH ?? ''}`, NO_COLOR: '1' },
        reject: false,
        stdin: 'ignore',
      },
    );
    expect(r.exitCode, String(r.stderr)).toBe(0);
    expect(r.stderr).toContain(`unknown worktree under the lanes root (left alone): ${stranger}`);
    expect(journal(repo, 'strange').filter((e) => e.event === 'worktree-unknown')).toEqual([
      expect.objectContaining({ path: stranger, branch: 'elsewhere' }),
    ]);
    const lines = readFileSync(calls, 'utf8').trim().split('\n');
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.filter((line) => / worktree list\b/.test(line))).toEqual([]);
    expect(lines.filter((line) => / rev-parse .*--verify\b/.test(line))).toEqual([]);
    expect(lines.filter((line) => / cat-file --batch-command$/.test(line))).toHaveLength(1);
    // The long-lived processes start during the preflight (before the batch branch is made),
    // and the identity is read when the batch starts, not when the first delivery waits for
    // it; the lane is checked out and its exit staged by lanes (no `reset --hard`, no `add -A`).
    const first = (pattern: RegExp) => lines.findIndex((line) => pattern.test(line));
    const branchMade = first(/ update-ref refs\/heads\/batch\/strange /);
    expect(branchMade).toBeGreaterThan(0);
    const sessions = [
      / mktree -z --batch$/,
      / hash-object -w -t commit --stdin-paths$/,
      / update-ref --stdin$/,
      / hash-object -w --no-filters --stdin-paths$/,
    ];
    for (const session of sessions) expect(first(session), session.source).toBeGreaterThan(0);
    for (const session of sessions) expect(first(session), session.source).toBeLessThan(branchMade);
    expect(first(/ var GIT_AUTHOR_IDENT$/)).toBeGreaterThan(0);
    // (before the first lane is checked out: its settings' read, once a batch, is `config --list`)
    expect(first(/ var GIT_AUTHOR_IDENT$/)).toBeLessThan(first(/ config --list -z$/));
    expect(lines.filter((line) => / config --list -z$/.test(line))).toHaveLength(1);
    expect(lines.filter((line) => / (add -A|reset --hard)\b/.test(line))).toEqual([]);
    expect(existsSync(stranger)).toBe(true);
  });
});
