import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo, runCli, snapshotTree, tempDir } from '../helpers/repo.js';

// The built CLI as a user runs it: global options, usage errors (exit 2) and the two
// read-only commands of this version. Run `npm run -s build` first.

const VERSION = (
  JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')) as {
    version: string;
  }
).version;

describe('lanes', () => {
  it('--help prints the usage and exits 0', async () => {
    const r = await runCli(['--help']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('usage: lanes [-C <dir>] <command>');
    expect(r.stdout).toContain('plan check <plan>');
    expect(r.stderr).toBe('');
    // The ways out of a stop, the states they lead to, and their exit codes.
    for (const text of [
      'drop <batch> <child>',
      'cancel <batch>',
      '[--budget N]',
      '[--max-tokens N] [--parallel N]',
      'init [<plan>] [--config]',
      'plan draft "<goal>"',
      '4 ended otherwise (failed, rejected, cancelled)',
      'completed failed rejected cancelled (terminal)',
      'needs_human skipped_blocked dropped',
    ])
      expect(r.stdout).toContain(text);
  });

  it('--version prints the package.json version', async () => {
    const r = await runCli(['--version']);
    expect(r).toEqual({ exitCode: 0, stdout: VERSION, stderr: '' });
  });

  it('without a command prints the usage and exits 2', async () => {
    const r = await runCli([]);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toContain('usage: lanes');
  });

  it('refuses an unknown command with exit 2', async () => {
    const r = await runCli(['frobnicate']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('unknown command "frobnicate"');
    expect(r.stdout).toBe('');
  });

  it('refuses an unknown option with exit 2, naming it', async () => {
    const repo = await makeRepo();
    const r = await runCli(['-C', repo, 'status', '--bogus']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("lanes status: Unknown option '--bogus'");
    expect(r.stdout).toBe('');
  });

  it('refuses -C to a missing directory with exit 2', async () => {
    const missing = join(tempDir(), 'nowhere');
    const r = await runCli(['-C', missing, 'status']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`-C ${missing}: no such directory`);
  });

  it('refuses -C without a directory with exit 2', async () => {
    const r = await runCli(['-C']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('-C needs a directory');
  });
});

describe('lanes plan check', () => {
  it('without a plan exits 2 with the usage', async () => {
    const r = await runCli(['plan', 'check']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('usage: lanes plan check <plan>');
  });

  it('with an extra argument exits 2, naming it', async () => {
    const r = await runCli(['plan', 'check', 'a.yaml', 'b.yaml']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('lanes plan check: unexpected argument "b.yaml"');
  });

  it('of a missing file exits 2', async () => {
    const dir = tempDir();
    const r = await runCli(['-C', dir, 'plan', 'check', 'absent.yaml']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`plan ${join(dir, 'absent.yaml')}: cannot read it (no such file)`);
  });

  it('of a valid plan exits 0 and prints the waves in order, writing nothing', async () => {
    const repo = await makeRepo();
    writeFileSync(
      join(repo, 'plan.yaml'),
      `batch: auth-rework
max_parallel: 2
children:
  - id: T1
    goal: Add a login rate limiter
    scope: ["src/auth/**"]
    acceptance: [{ id: A1, run: [npm, test] }]
  - id: T2
    goal: Document it
    scope: ["docs/**"]
    acceptance: [{ id: A1, run: "test -f docs/auth.md" }]
  - id: T3
    goal: Wire it into the API
    blocked_by: [T1]
    scope: ["src/api/**"]
    acceptance: [{ id: A1, run: [npm, test] }]
  - id: T4
    goal: Tune the limiter
    scope: ["src/auth/limits.ts"]
    acceptance: [{ id: A1, run: [npm, test] }]
    executor: script
    run: "sh tune.sh"
`,
    );
    const before = snapshotTree(repo);
    // A relative plan path is read from the -C directory.
    const r = await runCli(['-C', repo, 'plan', 'check', 'plan.yaml']);
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe(
      'plan auth-rework: 4 children in 3 waves, max_parallel 2, budget 4 children / 3 QA failures',
    );
    expect(lines[1]).toMatch(/^base HEAD, digest [0-9a-f]{64}$/);
    // T4 shares src/auth with T1, so it waits for the next wave; T3 waits for T1.
    expect(lines.slice(2)).toEqual([
      'wave 1: T1 (claude), T2 (claude)',
      'wave 2: T4 (script)',
      'wave 3: T3 (claude)',
    ]);
    expect(snapshotTree(repo)).toEqual(before);
  });

  it('works outside a git repository, with the default config', async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, 'plan.json'),
      JSON.stringify({
        batch: 'b1',
        children: [{ id: 'T1', goal: 'g', scope: ['x'], acceptance: [{ id: 'A1', run: 'true' }] }],
      }),
    );
    const r = await runCli(['plan', 'check', join(dir, 'plan.json')], {
      cwd: dir,
      env: { GIT_CEILING_DIRECTORIES: dirname(dir) },
    });
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('wave 1: T1 (claude)');
  });
});

describe('lanes status', () => {
  it('outside a git repository exits 2', async () => {
    const dir = tempDir();
    const r = await runCli(['-C', dir, 'status'], { env: { GIT_CEILING_DIRECTORIES: dirname(dir) } });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`${dir} is not inside a git work tree`);
    expect(r.stdout).toBe('');
  });

  it('with no batches exits 0, says so, and writes nothing', async () => {
    const repo = await makeRepo();
    const before = snapshotTree(join(repo, '.git'));
    const r = await runCli(['-C', repo, 'status']);
    expect(r).toEqual({ exitCode: 0, stdout: 'no batches in this repository', stderr: '' });
    const json = await runCli(['-C', repo, 'status', '--json']);
    expect(json.exitCode).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ batches: [] });
    expect(snapshotTree(join(repo, '.git'))).toEqual(before);
  });

  it('of an unknown batch exits 2', async () => {
    const repo = await makeRepo();
    const r = await runCli(['-C', repo, 'status', 'nope']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('no batch named "nope"');
    expect(r.stdout).toBe('');
  });

  it('of a batch id that is not an id exits 2', async () => {
    const repo = await makeRepo();
    const r = await runCli(['-C', repo, 'status', '../etc']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('"../etc" is not a valid batch id');
  });
});
