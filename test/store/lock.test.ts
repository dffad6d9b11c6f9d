import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import type { ResultPromise } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { acquireBatchLock, readLockHolder } from '../../src/store/lock.js';
import { tempDir } from '../helpers/repo.js';

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'hold-lock.mjs');
const running: ResultPromise[] = [];
afterEach(() => {
  for (const p of running.splice(0)) p.kill('SIGKILL');
});

/** Starts a process that takes the lock; resolves once it says LOCKED. */
async function holder(stateDir: string, batch: string) {
  const child = execa(process.execPath, [FIXTURE, stateDir, batch], {
    stdin: 'pipe',
    reject: false,
    buffer: false,
  });
  running.push(child);
  const line = await new Promise<string>((resolve, reject) => {
    let seen = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes('\n')) resolve(seen.trim());
    });
    child.on('exit', () => reject(new Error(`holder exited early: ${seen}`)));
  });
  expect(line).toMatch(/^LOCKED \d+$/);
  // Wrapped: an execa subprocess is a thenable, and returning it would await its exit.
  return { child, pid: child.pid as number };
}

describe('batch lock', () => {
  it('refuses a second process at once, naming the holder pid', async () => {
    const stateDir = join(tempDir(), 'lanes');
    const { pid } = await holder(stateDir, 'b1');
    // The holder stays alive and refreshes its lock, so a contender that retried or
    // waited for staleness would hang here instead of exiting.
    const second = await execa(process.execPath, [FIXTURE, stateDir, 'b1'], {
      reject: false,
      stdin: 'ignore',
    });
    expect(second.exitCode).toBe(2);
    expect(second.stdout).toContain('REFUSED lock_held');
    expect(second.stdout).toContain(`pid ${pid}`);
    expect(second.stdout).toContain('hold-lock b1');
  });

  it('takes over at once from a holder killed with SIGKILL', async () => {
    const stateDir = join(tempDir(), 'lanes');
    const { child } = await holder(stateDir, 'b2');
    child.kill('SIGKILL');
    await child;
    expect(existsSync(join(stateDir, 'locks', 'b2.lock'))).toBe(true); // the dead holder left its lock behind
    const lock = await acquireBatchLock(stateDir, 'b2', 'test');
    expect(readLockHolder(stateDir, 'b2')?.pid).toBe(process.pid);
    await lock.release();
    expect(readLockHolder(stateDir, 'b2')).toBeNull();
  });

  it('locks batches independently and can be taken again after release', async () => {
    const stateDir = join(tempDir(), 'lanes');
    const a = await acquireBatchLock(stateDir, 'a', 'test');
    const b = await acquireBatchLock(stateDir, 'b', 'test');
    await a.release();
    const again = await acquireBatchLock(stateDir, 'a', 'test');
    await again.release();
    await b.release();
  });

  it('refuses in-process re-entry naming this process', async () => {
    const stateDir = join(tempDir(), 'lanes');
    const lock = await acquireBatchLock(stateDir, 'c', 'first');
    await expect(acquireBatchLock(stateDir, 'c', 'second')).rejects.toMatchObject({
      code: 'lock_held',
      message: expect.stringContaining(`pid ${process.pid}`),
    });
    await lock.release();
  });
});
