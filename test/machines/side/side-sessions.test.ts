import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { laneBranch } from '../../../src/core/basics/ids.js';
import { machineLanePath, machineRepoPath, repoId, sessionName } from '../../../src/machines/protocol.js';
import type { SessionState } from '../../../src/machines/protocol.js';
import { git, makeRepo, tempDir } from '../../helpers/repo.js';
import { until } from '../../helpers/until.js';
import { canaryStrings, HOSTILE_SEGMENT } from './canaries.js';
import { batchId, machine, tmuxNames } from './side.js';
import type { Machine } from './side.js';

// Executors on a machine: detached tmux sessions on lanes' own server (`tmux -L lanes`),
// under the exit wrapper, their output appended to a log; and batch.clean, which leaves
// nothing of one batch and everything of another.

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const clean of cleanups.splice(0)) await clean();
});

/** Every file below `dir` named CANARY-… (what the hostile strings would touch). */
function canariesIn(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) =>
    basename(f).startsWith('CANARY-'),
  );
}

async function ended(m: Machine, name: string): Promise<SessionState> {
  return until(
    async () =>
      (await m.call('session.list', { prefix: name })).find((s) => s.name === name && s.exit !== null),
    `session ${name} to end`,
    { timeoutMs: 15_000, everyMs: 100 },
  );
}

describe('the side script: sessions', () => {
  it('runs a session detached under the exit wrapper: exit 3 in its status, its output in the log', async () => {
    const m = machine('repo-000000000001');
    const batch = batchId('s');
    cleanups.push(() => m.call('batch.clean', { batch }));
    const name = sessionName(batch, 'a', 'run-x', 1);
    const run = join(m.root, 'runs', batch, 'a');
    const work = join(m.root, 'work');
    mkdirSync(work, { recursive: true });
    const started = await m.call('session.start', {
      name,
      cwd: work,
      argv: ['sh', '-c', 'echo made > made.txt; echo "hello from $0"; exit 3', 'the-session'],
      env: {},
      log: join(run, 'attempt-1.log'),
      status: join(run, 'attempt-1.status'),
    });
    expect(started.name).toBe(name);
    const state = await ended(m, name);
    expect(state).toEqual({ name, running: false, exit: { code: 3, signal: null } });
    expect(readFileSync(join(work, 'made.txt'), 'utf8')).toBe('made\n');
    expect(readFileSync(join(run, 'attempt-1.log'), 'utf8')).toContain('hello from the-session');
    expect(tmuxNames()).not.toContain(name);
    // A retried start of the same session does not run it again.
    await m.call('session.start', {
      name,
      cwd: work,
      argv: ['sh', '-c', 'echo again >> made.txt; exec sleep 30'],
      env: {},
      log: join(run, 'attempt-1.log'),
      status: join(run, 'attempt-1.status'),
    });
    // (a second run would be a session of that name now: tmux has made it when start answers)
    expect(tmuxNames()).not.toContain(name);
    expect(await m.call('session.list', { prefix: name })).toEqual([state]);
    expect(readFileSync(join(work, 'made.txt'), 'utf8')).toBe('made\n');
  });

  it('a start cut off between tmux making the session and the ready signal runs its executor once when retried', async () => {
    const m = machine('repo-000000000003');
    const batch = batchId('r');
    cleanups.push(() => m.call('batch.clean', { batch }));
    const name = sessionName(batch, 'a', 'run-x', 1);
    const run = join(m.root, 'runs', batch, 'a');
    const work = join(m.root, 'work');
    mkdirSync(work, { recursive: true });
    // A tmux in front of the real one that kills the side where it would signal the session
    // ready (as a dropped connection's SIGPIPE did): the session is made, its executor waits.
    const bin = tempDir('lanes-cut-tmux-');
    const real = execFileSync('sh', ['-c', 'command -v tmux'], { encoding: 'utf8' }).trim();
    writeFileSync(
      join(bin, 'tmux'),
      `#!/bin/sh\nfor a in "$@"; do [ "$a" = "-S" ] && { kill -9 $PPID; exit 1; }; done\nexec '${real}' "$@"\n`,
      { mode: 0o755 },
    );
    const start = (env: Record<string, string>) =>
      m.call(
        'session.start',
        {
          name,
          cwd: work,
          argv: ['sh', '-c', 'echo ran >> ran.txt'],
          env: {},
          log: join(run, 'attempt-1.log'),
          status: join(run, 'attempt-1.status'),
        },
        env,
      );
    await expect(start({ PATH: `${bin}:${process.env.PATH ?? ''}` })).rejects.toThrow(/session.start failed/);
    expect(tmuxNames()).toContain(name);
    await start({}); // (the coordinator hands the start again)
    expect((await ended(m, name)).exit).toEqual({ code: 0, signal: null });
    expect(readFileSync(join(work, 'ran.txt'), 'utf8')).toBe('ran\n');
  });

  it('hands plan strings in argv, env and paths to the program byte for byte, and no canary runs', async () => {
    const m = machine('repo-000000000002');
    const canaryDir = realpathSync(tempDir('lanes-canary-'));
    const strings = canaryStrings(join(canaryDir, 'CANARY'));
    const batch = batchId('c');
    cleanups.push(() => m.call('batch.clean', { batch }));
    const name = sessionName(batch, 'a.b', 'run-x', 1); // (a `.` tmux would not take)
    const cwd = join(m.root, 'work', HOSTILE_SEGMENT);
    mkdirSync(cwd, { recursive: true });
    const run = join(m.root, 'runs', batch, HOSTILE_SEGMENT);
    const env = Object.fromEntries(strings.map((s, i) => [`CANARY_${i}`, s]));
    const dump = [
      'for a in "$@"; do printf "%s\\0" "$a"; done > argv.bin',
      `for i in ${strings.map((_, i) => i).join(' ')}; do eval "printf '%s\\0' \\"\\$CANARY_$i\\""; done > env.bin`,
      'pwd > cwd.txt',
      'echo done-with-canaries',
    ].join('; ');
    await m.call('session.start', {
      name,
      cwd,
      argv: ['sh', '-c', dump, 'sh', ...strings],
      env,
      log: join(run, 'out #{session_name}.log'),
      status: join(run, 'attempt.status'),
    });
    expect((await ended(m, name)).exit).toEqual({ code: 0, signal: null });
    const split = (file: string) => readFileSync(join(cwd, file), 'utf8').split('\0').slice(0, -1);
    expect(split('argv.bin')).toEqual(strings);
    expect(split('env.bin')).toEqual(strings);
    expect(readFileSync(join(cwd, 'cwd.txt'), 'utf8')).toBe(`${cwd}\n`);
    expect(readFileSync(join(run, 'out #{session_name}.log'), 'utf8')).toContain('done-with-canaries');
    expect(readdirSync(canaryDir)).toEqual([]);
    expect(canariesIn(m.root)).toEqual([]);
    // (a shell that ran them would have run where the session, the side or tmux runs)
    for (const dir of [process.cwd(), homedir()])
      expect(readdirSync(dir).filter((f) => f.startsWith('CANARY-'))).toEqual([]);
  });
});

describe('the side script: batch.clean', () => {
  it('leaves no session, worktree, branch or run folder of the batch, and keeps those of another', async () => {
    const origin = await makeRepo();
    const m = machine(repoId(realpathSync(origin)));
    await m.call('wt.list', {});
    const cache = machineRepoPath(m.root, m.repo);
    const base = await git(origin, 'rev-parse', 'HEAD');
    await git(origin, 'push', '-q', cache, `HEAD:refs/lanes/in/${base}`);
    const gone = batchId('g');
    const kept = `${gone}-k`; // (its sessions' names start with the cleaned batch's prefix)
    cleanups.push(() => m.call('batch.clean', { batch: kept }));
    cleanups.push(() => m.call('batch.clean', { batch: gone }));
    for (const batch of [gone, kept]) {
      const lane = machineLanePath(m.root, 'm1', m.repo, batch, 'a');
      expect(
        await m.call('wt.add', { path: lane, branch: laneBranch(batch, 'a'), base, branchExists: false }),
      ).toBeNull();
      const run = join(m.root, 'runs', batch, 'a');
      await m.call('session.start', {
        name: sessionName(batch, 'a', 'run-x', 1),
        cwd: lane,
        argv: ['sh', '-c', 'echo $$ > "$0"; exec sleep 600', join(run, 'pid')],
        env: {},
        log: join(run, 'attempt-1.log'),
        status: join(run, 'attempt-1.status'),
      });
      await until(() => existsSync(join(run, 'pid')), `the session of ${batch} to run`);
    }
    const pidOf = (batch: string) => Number(readFileSync(join(m.root, 'runs', batch, 'a', 'pid'), 'utf8'));
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const goneSleep = pidOf(gone);
    const keptSleep = pidOf(kept);

    const cleaned = await m.call('batch.clean', { batch: gone });
    expect(cleaned.sessions).toEqual([sessionName(gone, 'a', 'run-x', 1)]);
    expect(cleaned.branches).toEqual([laneBranch(gone, 'a')]);

    const names = tmuxNames();
    expect(names).not.toContain(sessionName(gone, 'a', 'run-x', 1));
    expect(names).toContain(sessionName(kept, 'a', 'run-x', 1));
    await until(() => !alive(goneSleep), 'the cleaned batch’s executor to end');
    expect(alive(keptSleep)).toBe(true);
    const worktrees = await git(cache, 'worktree', 'list', '--porcelain');
    expect(worktrees).not.toContain(`/${gone}/a`);
    expect(worktrees).toContain(`/${kept}/a`);
    expect(await git(cache, 'branch', '--list', `lane/${gone}/*`)).toBe('');
    expect(await git(cache, 'branch', '--list', `lane/${kept}/*`)).toContain(laneBranch(kept, 'a'));
    expect(existsSync(join(m.root, 'runs', gone))).toBe(false);
    expect(existsSync(join(m.root, 'runs', kept, 'a', 'pid'))).toBe(true);
    expect(existsSync(machineLanePath(m.root, 'm1', m.repo, gone, 'a'))).toBe(false);
    expect(await m.call('session.list', { prefix: sessionName(gone, 'a', 'run-x', 1) })).toEqual([]);

    // Again: nothing left to do, nothing of the other batch touched.
    expect(await m.call('batch.clean', { batch: gone })).toEqual({
      worktrees: [],
      branches: [],
      sessions: [],
      runs: [],
    });
    expect(tmuxNames()).toContain(sessionName(kept, 'a', 'run-x', 1));
  });
});
