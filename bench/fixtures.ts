import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';

// Temporary repositories and plans for the benchmarks.

// The shipped CLI: the bundle that package.json's bin names.
export const CLI = join(import.meta.dirname, '..', 'lanes', 'main.js');

const made: string[] = [];
// Removed when the bench ends: left in /tmp, thousands of repositories and lanes made the
// file system itself slower run after run (docs/DECISIONS.md "The tick never waits for a worktree").
process.once('exit', () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

export async function makeRepo(dir: string): Promise<string> {
  const repo = join(dir, 'repo');
  mkdirSync(repo, { recursive: true });
  await execa('git', ['init', '-q', '-b', 'main', repo]);
  for (const [k, v] of [
    ['user.email', 'bench@lanes.invalid'],
    ['user.name', 'bench'],
    ['commit.gpgsign', 'false'],
  ])
    await execa('git', ['-C', repo, 'config', k as string, v as string]);
  writeFileSync(join(repo, 'README.md'), '# bench\n');
  await execa('git', ['-C', repo, 'add', '-A']);
  await execa('git', ['-C', repo, 'commit', '-q', '-m', 'initial']);
  return repo;
}

/** N independent children, each writing its own file; acceptance `true`; script executor. */
export function independentPlan(batch: string, n: number, parallel: number): object {
  return {
    batch,
    max_parallel: parallel,
    executor: 'script',
    children: Array.from({ length: n }, (_, i) => {
      const id = `c${String(i).padStart(4, '0')}`;
      return {
        id,
        goal: `write ${id}`,
        scope: [`files/${id}.txt`],
        acceptance: [{ id: 'ok', run: ['true'] }],
        run: `mkdir -p files && echo ${i} > files/${id}.txt`,
      };
    }),
  };
}

export function writeJson(path: string, value: unknown): string {
  writeFileSync(path, JSON.stringify(value));
  return path;
}

/**
 * Polls `ok` every `everyMs` until it holds; throws naming `what` after `timeoutMs`. (What the
 * figures wait for, a screen, a count of lanes, a file, has no event to wait on.)
 */
export async function pollUntil(
  ok: () => boolean | Promise<boolean>,
  what: string,
  { timeoutMs, everyMs }: { timeoutMs: number; everyMs: number },
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Time from starting `command` in a new detached tmux session of cols x rows (a server of
 * its own) until `done(socket)` resolves; the server is killed afterwards.
 */
export async function timeInTmux(
  cols: number,
  rows: number,
  command: (socket: string) => string,
  done: (socket: string) => Promise<void>,
): Promise<number> {
  const socket = `lanes-bench-${process.pid}-${++tmuxServers}`;
  try {
    const start = process.hrtime.bigint();
    await execa('tmux', [
      '-L',
      socket,
      'new-session',
      '-d',
      '-x',
      `${cols}`,
      '-y',
      `${rows}`,
      command(socket),
    ]);
    await done(socket);
    return Number(process.hrtime.bigint() - start) / 1e6;
  } finally {
    await execa('tmux', ['-L', socket, 'kill-server'], { reject: false });
  }
}
let tmuxServers = 0;

/** A lane's launch that shows `file` (the pane figures' executor: `cat`). */
export function catLaunch(dir: string, taskId: string, file: string) {
  return {
    taskId,
    runId: 'bench',
    attempt: 1,
    cwd: dir,
    argv: ['cat', file],
    env: {},
    logPath: join(dir, 'pane.log'),
    statusPath: join(dir, 'pane.status'),
  };
}
