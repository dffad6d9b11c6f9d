import { readdirSync, rmSync, unlinkSync } from 'node:fs';
import { isSameProcessAlive, processStartTime } from '../process/process-info.js';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import lockfile from 'proper-lockfile';
import { z } from 'zod';
import { LanesError } from '../core/basics/errors.js';
import { batchPaths } from './state-dir.js';
import { ensureStateDir, readStateFile, writeStateFileAtomic } from './safe-fs.js';

// One coordinator per batch (DESIGN §2.3). proper-lockfile gives the atomic mkdir lock and
// its heartbeat; beside it a holder file says who holds it (pid, process start time,
// host, command). A lock whose holder process is gone (kill -9, a closed terminal) is
// taken over at once instead of after proper-lockfile's staleness timeout.
// Before it tries, a contender leaves an intent file (`<batch>.intent.<pid>.json`): a lock
// without a holder file belongs to a process that is starting up only while one of
// those is alive, so the gap between taking the lock and writing the holder (a crash
// there) does not leave the batch locked until the staleness timeout.

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

/** The holder's process still runs (a holder on another host is taken to). */
export function isHolderAlive(holder: LockHolder): boolean {
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

/** Who runs the batch now: the lock's holder while its process is alive, else null (`lanes status`). */
export function liveLockHolder(stateDir: string, batchId: string): LockHolder | null {
  const holder = readLockHolder(stateDir, batchId);
  return holder && isHolderAlive(holder) ? holder : null;
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

  const holder: LockHolder = {
    pid: process.pid,
    start_time: processStartTime(process.pid),
    host: hostname(),
    command,
    acquired_at: new Date().toISOString(),
  };
  const intent = intentPath(paths.lock, process.pid);
  writeStateFileAtomic(stateDir, intent, `${JSON.stringify(holder)}\n`);
  let releaseLock: () => Promise<void>;
  try {
    releaseLock = await takeLock(stateDir, batchId, paths.lock, lockDir, options);
    writeStateFileAtomic(stateDir, paths.lockHolder, `${JSON.stringify(holder)}\n`);
  } finally {
    rmSync(intent, { force: true }); // (only once the holder file says who holds the lock)
  }
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

function intentPath(lock: string, pid: number): string {
  return `${lock}.intent.${pid}.json`;
}

/** Processes other than this one that are between writing their intent and their holder file. */
function liveIntents(stateDir: string, lock: string): LockHolder[] {
  const dir = dirname(lock);
  const prefix = `${lock.slice(dir.length + 1)}.intent.`;
  const live: LockHolder[] = [];
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(prefix) || !/^\d+\.json$/.test(name.slice(prefix.length))) continue;
    let intent: LockHolder | null = null;
    try {
      intent = holderSchema.parse(JSON.parse(readStateFile(stateDir, join(dir, name)) ?? ''));
    } catch {
      // unreadable: a crash while writing it; its process is gone
    }
    if (intent?.pid === process.pid && intent.host === hostname()) continue;
    if (intent && isHolderAlive(intent)) live.push(intent);
    else rmSync(join(dir, name), { force: true });
  }
  return live;
}

async function takeLock(
  stateDir: string,
  batchId: string,
  lock: string,
  lockDir: string,
  options: Parameters<typeof lockfile.lock>[1],
): Promise<() => Promise<void>> {
  let releaseLock: () => Promise<void>;
  try {
    releaseLock = await lockfile.lock(lock, options);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error;
    const holder = readLockHolder(stateDir, batchId);
    if (holder && isHolderAlive(holder))
      throw new LanesError(
        'lock_held',
        `batch ${batchId} is already run by another lanes: ${describe(holder)}`,
        2,
      );
    const starting = holder ? [] : liveIntents(stateDir, lock);
    if (starting.length > 0)
      throw new LanesError(
        'lock_held',
        `batch ${batchId} is locked by a lanes that is starting up: ${describe(starting[0]!)} (${lockDir})`,
        2,
      );
    // The holder is gone (or died before it could write its holder file): take the lock
    // over now rather than after the staleness timeout.
    rmSync(lockDir, { recursive: true, force: true });
    try {
      releaseLock = await lockfile.lock(lock, options);
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
  return releaseLock;
}
