import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as wait } from 'node:timers/promises';

// Git does not lock its list of worktrees: two `git worktree add` (or an add and a remove)
// run side by side and one dies on the other's half-made entry ("failed to read
// worktrees/<id>/commondir"). The coordinator runs them one at a time in its own process
// (src/git/runner/git.ts, isWorktreeBookkeeping); on a machine each op is a process of its
// own, and the link runs several at once, so they take turns by this lock: a folder in the
// cache made by one process at a time, with the holder's pid in it (a holder that died, a
// kill -9 or a dropped connection, does not keep it).

const LOCK = 'lanes-side.lock';
const GIVE_UP_MS = 120_000;

/** The holder runs, died, or is not written yet (the lock being made: its pid comes next). */
function holder(dir: string): 'alive' | 'dead' | 'unwritten' {
  let text: string;
  try {
    text = readFileSync(join(dir, 'pid'), 'utf8');
  } catch {
    return 'unwritten';
  }
  const pid = Number(text);
  if (text === '') return 'unwritten';
  if (!Number.isInteger(pid) || pid <= 0) return 'dead';
  try {
    process.kill(pid, 0);
    return 'alive';
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM' ? 'alive' : 'dead';
  }
}

/** Runs `fn` holding the cache's bookkeeping lock. */
export async function withCacheLock<T>(cache: string, fn: () => Promise<T>): Promise<T> {
  const dir = join(cache, LOCK);
  const deadline = Date.now() + GIVE_UP_MS;
  let unreadSince: number | null = null;
  for (;;) {
    try {
      mkdirSync(dir);
      writeFileSync(join(dir, 'pid'), String(process.pid));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const seen = holder(dir);
    unreadSince = seen === 'unwritten' ? (unreadSince ?? Date.now()) : null;
    // (a lock without a pid for a whole second: its maker died between the two steps)
    const stale = seen === 'dead' || (unreadSince !== null && Date.now() - unreadSince > 1000);
    if (stale) rmSync(dir, { recursive: true, force: true });
    if (Date.now() > deadline) throw new Error(`the repository cache ${cache} stayed locked (${dir})`);
    await wait(10 + Math.floor(Math.random() * 20));
  }
  try {
    return await fn();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
