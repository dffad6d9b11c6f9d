import {
  closeSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { constants } from 'node:fs';
import { dirname, relative, sep } from 'node:path';
import { randomBytes } from 'node:crypto';
import { stateFlush } from './durability.js';
import { LanesError } from '../core/basics/errors.js';
import { crashPoint } from '../process/crash-points.js';
import { changeTimesAlwaysMove } from '../process/change-times.js';

// File primitives for the state directory: nothing under it is ever reached through a
// symbolic link, and every write is temp file + fsync + rename, so a reader sees the old
// bytes or the new ones, never a torn file.

function symlinkError(path: string): LanesError {
  return new LanesError(
    'state_symlink',
    `refusing to follow a symbolic link in the state directory: ${path}`,
    2,
  );
}

/**
 * Throws when any component of `path` below `stateDir` (or stateDir itself) is a symlink.
 * True when every component exists (false: the walk stopped at one that does not).
 */
export function assertNoSymlink(stateDir: string, path: string): boolean {
  const rel = relative(stateDir, path);
  if (rel.startsWith('..'))
    throw new LanesError('state_invalid', `${path} is outside the state directory`, 2);
  let current = stateDir;
  const parts = rel === '' ? [] : rel.split(sep);
  for (const part of [null, ...parts]) {
    if (part !== null) current = `${current}${sep}${part}`;
    try {
      if (lstatSync(current).isSymbolicLink()) throw symlinkError(current);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw error;
    }
  }
  return true;
}

/** A state file opened to read, never through a symlink; null when it does not exist. */
function openToRead(path: string): number | null {
  try {
    return openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP') throw symlinkError(path);
    throw error;
  }
}

/** Reads a file under the state dir, or null when it does not exist. */
export function readStateFile(stateDir: string, path: string): string | null {
  assertNoSymlink(stateDir, path);
  const fd = openToRead(path);
  if (fd === null) return null;
  try {
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * What tells a file's bytes apart without reading them: its inode, size and change times.
 * lanes replaces a state file by a rename (a new inode) and any write in place moves its
 * times (nanoseconds where the file system keeps them, as git's index relies on).
 */
export type FileStamp = string;

function stampOf(st: { ino: bigint; size: bigint; mtimeNs: bigint; ctimeNs: bigint }): FileStamp {
  return `${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
}

/**
 * Temp file names: the pid, a random part drawn once a process (a crashed process of the same
 * pid may have left one) and a count, so that no write draws random bytes of its own.
 */
const tempNames = (() => {
  const once = randomBytes(4).toString('hex');
  let count = 0;
  return { next: () => `${once}${(++count).toString(36)}` };
})();

/** The folders this process has written a state file in (writeStateFileAtomic). */
const writtenFolders = new Set<string>();

/**
 * A stamp proves a file unchanged only where a change made after the stamp was taken always
 * moves the file's change time (process/change-times.ts); elsewhere the file is always read.
 * Only where this process writes state already: a command that only reads writes no probe.
 */
function changesAlwaysSeen(dir: string): boolean {
  return writtenFolders.has(dir) && changeTimesAlwaysMove(dir);
}

/**
 * readStateFile, with the file's stamp; 'same' (nothing read) when the file is still the
 * one `known` stamped. For a state file read again and again (the record, a kernel record,
 * the plan): one lstat instead of an open and a read.
 */
export function readStateFileStamped(
  stateDir: string,
  path: string,
  known: FileStamp | null,
): { text: string; stamp: FileStamp } | 'same' | null {
  // A file that is still the one `known` stamped is neither read nor are its folders walked
  // again: nothing is read through them, and a folder swapped for a link to another place
  // would show another file (another inode), so another stamp.
  if (known !== null && changesAlwaysSeen(dirname(path))) {
    const seen = lstatSync(path, { bigint: true, throwIfNoEntry: false });
    if (seen && !seen.isSymbolicLink() && stampOf(seen) === known) return 'same';
  }
  if (!assertNoSymlink(stateDir, dirname(path))) return null;
  const st = lstatSync(path, { bigint: true, throwIfNoEntry: false });
  if (!st) return null;
  if (st.isSymbolicLink()) throw symlinkError(path);
  const fd = openToRead(path);
  if (fd === null) return null;
  try {
    // (the stamp of the file read, not of the one looked at a moment before)
    const stamp = stampOf(fstatSync(fd, { bigint: true }));
    return { text: readFileSync(fd, 'utf8'), stamp };
  } finally {
    closeSync(fd);
  }
}

export function ensureStateDir(stateDir: string, dir: string): void {
  if (assertNoSymlink(stateDir, dir)) return; // (there already: no mkdir, no second walk)
  mkdirSync(dir, { recursive: true });
  assertNoSymlink(stateDir, dir);
}

/**
 * Writes `text` to `path` atomically: temp file in the same folder, fsync, rename, fsync
 * folder. `durable: false` leaves out both fsyncs: a reader (or a process crash) still sees
 * the old bytes or the new ones, but a power loss may keep the old file (for files that
 * are derived again anyway, such as a running batch's report). Returns the new file's
 * stamp (readStateFileStamped). No write is flushed when
 * the repository's git does not flush its references either (store/durability.ts).
 */
export function writeStateFileAtomic(
  stateDir: string,
  path: string,
  text: string,
  options: { durable?: boolean } = {},
): FileStamp {
  const durable = (options.durable ?? true) && stateFlush(stateDir);
  ensureStateDir(stateDir, dirname(path));
  // (its folders were walked just now: the file itself is what is left)
  assertNoSymlink(dirname(path), path);
  const temp = `${path}.${process.pid}.${tempNames.next()}.tmp`;
  const fd = openSync(
    temp,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o644,
  );
  try {
    writeSync(fd, text);
    if (durable) fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    unlinkSync(temp);
    throw error;
  }
  let stamp: FileStamp;
  try {
    crashPoint('atomic-write-before-rename', relative(stateDir, path));
    renameSync(temp, path);
    // (of the file this wrote, through its descriptor: never of one renamed over it since)
    stamp = stampOf(fstatSync(fd, { bigint: true }));
  } finally {
    closeSync(fd);
  }
  writtenFolders.add(dirname(path));
  if (!durable) return stamp;
  const dirFd = openSync(dirname(path), constants.O_RDONLY);
  try {
    fsyncSync(dirFd);
  } finally {
    closeSync(dirFd);
  }
  return stamp;
}
