import { cpSync, existsSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { CLI, makeRepo, tempDir } from '../helpers/repo.js';
import { until } from '../helpers/until.js';

// The bundle's code cache (src/process/code-cache.ts) on a copy of the built bundle, so that
// the tests' own runs of dist/lanes keep theirs: a run without a cache writes one for each
// chunk it compiled, a later run takes it as it is, a cache V8 rejects is written again, a
// folder that cannot be written changes nothing, and a process that runs on writes its
// cache before it ends.

const BUNDLE = join(CLI, '..');
const PROFILE_ROOT = `${process.version}-${process.arch}`;

/** A copy of the bundle beside a link to the package's node_modules (its externals). */
function bundleCopy(): string {
  const dir = tempDir('lanes-code-cache-');
  cpSync(BUNDLE, join(dir, 'lanes'), { recursive: true, filter: (path) => !path.includes('.code-cache') });
  symlinkSync(join(BUNDLE, '..', '..', 'node_modules'), join(dir, 'node_modules'));
  return join(dir, 'lanes');
}

function run(bundle: string, args: string[], input?: string) {
  return execa(process.execPath, [join(bundle, 'main.js'), ...args], {
    reject: false,
    env: { NO_COLOR: '1' },
    ...(input === undefined ? { stdin: 'ignore' as const } : { input }),
  });
}

/** Each cache file of `profile`, by name, with its bytes and when they were written. */
function caches(bundle: string, profile: string): Map<string, { bytes: Buffer; written: bigint }> {
  const dir = join(bundle, '.code-cache', PROFILE_ROOT, profile);
  if (!existsSync(dir)) return new Map();
  // (a cache being written is a .tmp file until it is renamed into place)
  const names = readdirSync(dir).filter((name) => name.endsWith('.bin'));
  return new Map(
    names.map((name) => {
      const file = join(dir, name);
      return [name, { bytes: readFileSync(file), written: statSync(file, { bigint: true }).mtimeNs }];
    }),
  );
}

describe('the bundle code cache', () => {
  it('is written for each chunk a run compiled, then taken as it is by the next run', async () => {
    const bundle = bundleCopy();
    const first = await run(bundle, ['--version']);
    expect(first.exitCode).toBe(0);
    const written = caches(bundle, '__version');
    // every chunk but the entry (node compiles that one before the cache is in place)
    const chunks = [...written.keys()].map((name) => name.replace(/\.\d+\.\d+\.bin$/, ''));
    expect(chunks.length).toBeGreaterThan(0);
    expect(chunks).not.toContain('main.js');
    for (const chunk of chunks) expect(existsSync(join(bundle, chunk))).toBe(true);
    for (const [name, { bytes }] of written) {
      const [, size] = /\.(\d+)\.\d+\.bin$/.exec(name)!;
      expect(Number(size)).toBe(statSync(join(bundle, name.replace(/\.\d+\.\d+\.bin$/, ''))).size);
      expect(bytes.length).toBeGreaterThan(0);
    }

    const second = await run(bundle, ['--version']);
    expect(second.stdout).toBe(first.stdout);
    expect(caches(bundle, '__version')).toEqual(written);
    // another command has a profile of its own (its name's dashes made plain)
    expect((await run(bundle, ['--help'])).exitCode).toBe(0);
    expect(caches(bundle, '__help').size).toBeGreaterThan(0);
  });

  it('compiles from source where V8 rejects a cache, and writes it again', async () => {
    const bundle = bundleCopy();
    expect((await run(bundle, ['--version'])).exitCode).toBe(0);
    const [name] = [...caches(bundle, '__version').keys()];
    const file = join(bundle, '.code-cache', PROFILE_ROOT, '__version', name!);
    const torn = Buffer.from('not a code cache at all');
    writeFileSync(file, torn);

    const again = await run(bundle, ['--version']);
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toBe((await run(bundle, ['--version'])).stdout);
    const rewritten = readFileSync(file);
    expect(rewritten.equals(torn)).toBe(false);
    // and the cache written again is one V8 takes: the next run leaves it as it is
    await run(bundle, ['--version']);
    expect(readFileSync(file).equals(rewritten)).toBe(true);
  });

  it('is not written by a run that ends on bad input', async () => {
    const bundle = bundleCopy();
    const result = await run(bundle, ['frobnicate']);
    expect(result.exitCode).toBe(2);
    expect(existsSync(join(bundle, '.code-cache'))).toBe(false);
    // (the same command written well does write one)
    expect((await run(bundle, ['--version'])).exitCode).toBe(0);
    expect(existsSync(join(bundle, '.code-cache'))).toBe(true);
  });

  it('changes nothing where its folder cannot be made', async () => {
    const bundle = bundleCopy();
    writeFileSync(join(bundle, '.code-cache'), 'a file where the folder would be\n');
    const result = await run(bundle, ['--version']);
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toBe('');
    expect(readFileSync(join(bundle, '.code-cache'), 'utf8')).toBe('a file where the folder would be\n');
    expect(readdirSync(bundle).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('is written by a process that runs on, before it ends', async () => {
    const bundle = bundleCopy();
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const go = join(repo, '..', 'go');
    const plan = join(repo, '..', 'plan.json');
    // (the child's executor waits for the test: the batch runs until the cache is seen)
    const wait = `while [ ! -e '${go}' ]; do sleep 0.05; done; echo b > a.txt`;
    writeFileSync(
      plan,
      JSON.stringify({
        batch: 'cached',
        executor: 'script',
        children: [
          { id: 'a', goal: 'a', scope: ['a.txt'], acceptance: [{ id: 'ok', run: ['true'] }], run: wait },
        ],
      }),
    );
    const start = execa(
      process.execPath,
      [join(bundle, 'main.js'), '-C', repo, 'start', '--yes', '--headless', plan],
      {
        reject: false,
        env: { NO_COLOR: '1' },
        stdin: 'ignore',
      },
    );
    try {
      await until(() => caches(bundle, 'start').size > 0 || start.exitCode !== null, 'the cache or an end', {
        timeoutMs: 20_000,
        everyMs: 100,
      });
      expect(start.exitCode).toBeNull(); // (still running its batch)
      expect(caches(bundle, 'start').size).toBeGreaterThan(0);
    } finally {
      writeFileSync(go, '');
    }
    const ended = await start;
    expect(ended.exitCode, ended.stderr).toBe(0);
  });
});
