import { rmSync, unlinkSync } from 'node:fs';
import { isSameProcessAlive, processStartTime } from '../hosts/process-info.js';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import lockfile from 'proper-lockfile';
import { z } from 'zod';
import { LanesError } from '../core/errors.js';
import { batchPaths } from './state-dir.js';
import { ensureStateDir, readStateFile, writeStateFileAtomic } from './safe-fs.js';

// One coordinator per batch (SPEC §2.3). proper-lockfile gives the atomic mkdir lock and
// its heartbeat; beside it a holder file says who holds it (pid, process start time,
// host, command). A lock whose holder process is gone (kill -9, a closed terminal) is
// taken over at once instead of after proper-lockfile's staleness timeout.

const STALE_MS = 10_000;
const UPDATE_MS = 2_000;

const holderSchema = z.object({
  pid: z.number().int(),
  start_time: z.string().nullable(),
  host: z.string(),
  command: z.string(),
  acquired_at: z.string(),
});
export type LockHolder = z.output<typeof holderSchema>;

function isAlive(holder: LockHolder): boolean {
  if (holder.host !== hostname()) return true; // cannot see another host's processes: assume alive
  return isSameProcessAlive(holder.pid, holder.start_time);
}

export interface BatchLock {
  holder: LockHolder;
  /** Set when the heartbeat found the lock taken from us (the process must stop writing). */
  readonly compromised: boolean;
  release(): Promise<void>;
}

function describe(holder: LockHolder): string {
  return `pid ${holder.pid} on ${holder.host} (since ${holder.acquired_at}, command: ${holder.command})`;
}

export function readLockHolder(stateDir: string, batchId: string): LockHolder | null {
  const text = readStateFile(stateDir, batchPaths(stateDir, batchId).lockHolder);
  if (text === null) return null;
  try {
    return holderSchema.parse(JSON.parse(text));
  } catch {
    return null;
  }
}

export async function acquireBatchLock(
  stateDir: string,
  batchId: string,
  command: string,
): Promise<BatchLock> {
  const paths = batchPaths(stateDir, batchId);
  ensureStateDir(stateDir, dirname(paths.lock));
  const lockDir = `${paths.lock}.lock`;
  let compromised = false;
  const options = {
    realpath: false,
    stale: STALE_MS,
    update: UPDATE_MS,
    retries: 0,
    onCompromised: () => {
      compromised = true;
    },
  };

  let releaseLock: () => Promise<void>;
  try {
    releaseLock = await lockfile.lock(paths.lock, options);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error;
    const holder = readLockHolder(stateDir, batchId);
    if (holder && isAlive(holder))
      throw new LanesError(
        'lock_held',
        `batch ${batchId} is already run by another lanes: ${describe(holder)}`,
        2,
      );
    if (!holder)
      throw new LanesError(
        'lock_held',
        `batch ${batchId} is locked by a lanes that is starting up (${lockDir})`,
        2,
      );
    // The holder is gone: take the lock over now rather than after the staleness timeout.
    rmSync(lockDir, { recursive: true, force: true });
    try {
      releaseLock = await lockfile.lock(paths.lock, options);
    } catch (again) {
      if ((again as NodeJS.ErrnoException).code === 'ELOCKED') {
        const other = readLockHolder(stateDir, batchId);
        throw new LanesError(
          'lock_held',
          `batch ${batchId} was just taken by ${other ? describe(other) : 'another lanes'}`,
          2,
        );
      }
      throw again;
    }
  }

  const holder: LockHolder = {
    pid: process.pid,
    start_time: processStartTime(process.pid),
    host: hostname(),
    command,
    acquired_at: new Date().toISOString(),
  };
  writeStateFileAtomic(stateDir, paths.lockHolder, `${JSON.stringify(holder)}\n`);
  return {
    holder,
    get compromised() {
      return compromised;
    },
    async release() {
      try {
        unlinkSync(paths.lockHolder);
      } catch {
        // already gone: nothing to say
      }
      if (!compromised) await releaseLock();
    },
  };
}
