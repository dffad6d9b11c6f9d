import { createHash } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { execa } from 'execa';
import { afterAll } from 'vitest';

// Real git repositories in temporary folders (never mocked), and the built CLI run as a
// real process.

const made: string[] = [];
// (removing a file's hundreds of repositories takes more than the default 10 s hook time
// on a loaded 2-core machine: a cleanup, not a measured figure)
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
}, 120_000);

export function tempDir(prefix = 'lanes-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

export async function git(cwd: string, ...args: string[]): Promise<string> {
  const result = await execa('git', args, { cwd, env: { GIT_CONFIG_NOSYSTEM: '1' } });
  return result.stdout;
}

/** A new repository with one commit on `main`; returns its top-level path. */
export async function makeRepo(files: Record<string, string> = { 'README.md': '# test\n' }): Promise<string> {
  const dir = join(tempDir(), 'repo');
  await execa('git', ['init', '-q', '-b', 'main', dir]);
  await git(dir, 'config', 'user.email', 'test@example.com');
  await git(dir, 'config', 'user.name', 'Test');
  await git(dir, 'config', 'commit.gpgsign', 'false');
  for (const [path, text] of Object.entries(files)) {
    const full = join(dir, path);
    await execa('mkdir', ['-p', join(full, '..')]);
    writeFileSync(full, text);
  }
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-q', '-m', 'initial');
  return dir;
}

// The shipped CLI: the bundle that package.json's bin names (built by `npm run build`).
export const CLI = join(import.meta.dirname, '..', '..', 'dist', 'lanes', 'main.js');

export interface CliResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export async function runCli(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}) {
  const result = await execa(process.execPath, [CLI, ...args], {
    cwd: options.cwd ?? process.cwd(),
    env: { NO_COLOR: '1', ...options.env },
    reject: false,
    stdin: 'ignore',
  });
  return {
    exitCode: result.exitCode ?? -1,
    stdout: String(result.stdout),
    stderr: String(result.stderr),
  } as CliResult;
}

/** Every file and link below `dir` with a hash of its bytes: equal snapshots mean nothing was written. */
export function snapshotTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!existsSync(dir)) return out;
  const walk = (path: string) => {
    const stat = lstatSync(path);
    const key = relative(dir, path) || '.';
    if (stat.isSymbolicLink()) out[key] = `link:${readlinkSync(path)}`;
    else if (stat.isDirectory()) {
      out[key] = 'dir';
      for (const name of readdirSync(path).sort()) walk(join(path, name));
    } else out[key] = createHash('sha256').update(readFileSync(path)).digest('hex');
  };
  walk(dir);
  return out;
}
