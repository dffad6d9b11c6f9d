import {
  chmodSync,
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  writeFileSync,
} from 'node:fs';
import { dirname } from 'node:path';
import type { OpValues, ParsedOpArgs } from '../protocol.js';
import { insideRoot } from './place.js';
import type { Place } from './place.js';

// Files the coordinator reads or puts on the machine (a transcript, a prompt, a status
// file): null when it is not there (yet), read from an offset (a log is read as it grows), written whole (a temporary file
// renamed over it, so a reader never sees half of it), only inside the root.

export function readFileOp({ path, offset, max }: ParsedOpArgs<'file.read'>): OpValues['file.read'] {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null; // (not there yet)
    throw error;
  }
  try {
    const size = fstatSync(fd).size;
    const length = Math.max(0, Math.min(max, size - offset));
    const buffer = Buffer.alloc(length);
    const read = length > 0 ? readSync(fd, buffer, 0, length, offset) : 0;
    return { base64: buffer.subarray(0, read).toString('base64'), size };
  } finally {
    closeSync(fd);
  }
}

export function writeFileOp(
  { path, base64, mode }: ParsedOpArgs<'file.write'>,
  place: Place,
): OpValues['file.write'] {
  const to = insideRoot(place, path, 'file.write: the path');
  mkdirSync(dirname(to), { recursive: true });
  const temp = `${to}.lanes-${process.pid}.tmp`;
  writeFileSync(temp, Buffer.from(base64, 'base64'), { mode: mode ?? 0o644 });
  if (mode !== undefined) chmodSync(temp, mode & 0o7777);
  renameSync(temp, to);
  return null;
}
