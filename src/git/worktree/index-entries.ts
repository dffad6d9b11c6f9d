import { readFileSync } from 'node:fs';
import type { BigIntStats } from 'node:fs';

// An index file read for what git recorded in it (git's index format, versions 2 to 4:
// gitformat-index(5)): each entry's path, mode, flags and the stat data `git add` saw of the
// file when it hashed it, and the root of its cached tree (the TREE extension). A file whose
// stat data is still that one is unchanged since git read it, wherever a change always moves
// the file's change time (see exit-tree.ts). Stamps here are git's own 32-bit fields: inode,
// size, mtime and ctime (seconds and nanoseconds).

const U32 = 2n ** 32n;
const NS = 1_000_000_000n;

function seconds(ns: bigint): string {
  return `${(ns / NS) % U32}.${ns % NS}`;
}

function stampOf(ino: bigint, size: bigint, mtimeNs: bigint, ctimeNs: bigint): string {
  return `${ino % U32}:${size % U32}:${seconds(mtimeNs)}:${seconds(ctimeNs)}`;
}

/** A file's stamp from its lstat, in the fields an index entry keeps. */
export function statStamp(st: BigIntStats): string {
  return stampOf(st.ino, st.size, st.mtimeNs, st.ctimeNs);
}

export interface IndexEntry {
  path: string;
  /** git's mode: 0o100644, 0o100755, 0o120000 (a symlink), 0o160000 (a submodule). */
  mode: number;
  stage: number;
  /** assume-valid, skip-worktree or intent-to-add: git does not compare such a file as usual. */
  special: boolean;
  stamp: string;
  /** The object name git recorded for the entry (hex). */
  sha: string;
}

export interface IndexRead {
  /** Every entry, or those of the wanted paths. */
  entries: IndexEntry[];
  /** The tree the whole index makes, when its cached tree says so (else null). */
  rootTree: string | null;
  /** The cached tree (the TREE extension) as it is in the file, when there is one. */
  treeExtension: Buffer | null;
  version: number;
  /** The names of its extensions, in the file's order. */
  extensions: string[];
}

/**
 * The index at `indexPath`: every entry, or those of the `wanted` paths (then no other
 * path is decoded: an index of a big repository is read in a few milliseconds). Null when
 * the file is not an index this reads (a version other than 2-4, a split index: its entries
 * are partly in another file; cut short), or holds more than `limit` entries.
 */
export function readIndex(
  indexPath: string,
  oidBytes: number,
  wanted: ReadonlySet<string> | 'all',
  limit = Infinity,
): IndexRead | null {
  try {
    return parseIndex(indexPath, oidBytes, wanted, limit);
  } catch (error) {
    if (error instanceof RangeError) return null; // (a field past the end: cut short)
    throw error;
  }
}

function parseIndex(
  indexPath: string,
  oidBytes: number,
  wanted: ReadonlySet<string> | 'all',
  limit: number,
): IndexRead | null {
  // (the wanted paths' bytes, by length: a path of another length is not one of them)
  const byLength = new Map<number, Buffer[]>();
  if (wanted !== 'all')
    for (const path of wanted) {
      const bytes = Buffer.from(path);
      const same = byLength.get(bytes.length);
      if (same) same.push(bytes);
      else byLength.set(bytes.length, [bytes]);
    }
  let buf: Buffer;
  try {
    buf = readFileSync(indexPath);
  } catch {
    return null;
  }
  if (buf.length < 12 || buf.toString('latin1', 0, 4) !== 'DIRC') return null;
  const version = buf.readUInt32BE(4);
  const count = buf.readUInt32BE(8);
  if (version < 2 || version > 4 || count > limit) return null;
  const entries: IndexEntry[] = [];
  let off = 12;
  let previous: Buffer = Buffer.alloc(0);
  const fixed = 40 + oidBytes + 2; // (ten 32-bit fields, the object name, the flags)
  for (let i = 0; i < count; i++) {
    if (off + fixed > buf.length) return null;
    const flags = buf.readUInt16BE(off + 40 + oidBytes);
    const hasExtended = version >= 3 && (flags & 0x4000) !== 0;
    const extended = hasExtended ? buf.readUInt16BE(off + fixed) : 0;
    const nameAt = off + fixed + (hasExtended ? 2 : 0);
    const named = entryName(buf, version, off, nameAt, flags, previous);
    if (named === null) return null;
    const [name, next] = named;
    previous = name;
    if (wanted === 'all' || byLength.get(name.length)?.some((b) => b.equals(name))) {
      const path = name.toString('utf8');
      const time = (at: number) => BigInt(buf.readUInt32BE(at)) * NS + BigInt(buf.readUInt32BE(at + 4));
      const [ino, size] = [BigInt(buf.readUInt32BE(off + 20)), BigInt(buf.readUInt32BE(off + 36))];
      entries.push({
        path,
        mode: buf.readUInt32BE(off + 24),
        stage: (flags >> 12) & 3,
        // (assume-valid in the flags; skip-worktree and intent-to-add in the extended ones)
        special: (flags & 0x8000) !== 0 || (extended & 0x6000) !== 0,
        stamp: stampOf(ino, size, time(off + 8), time(off)), // (ctime first, then mtime)
        sha: buf.toString('hex', off + 40, off + 40 + oidBytes),
      });
    }
    off = next;
  }
  // Extensions follow the entries (4-byte name, 32-bit size), then the checksum.
  let rootTree: string | null = null;
  let treeExtension: Buffer | null = null;
  const extensions: string[] = [];
  while (off + 8 <= buf.length - oidBytes) {
    const name = buf.toString('latin1', off, off + 4);
    extensions.push(name);
    const size = buf.readUInt32BE(off + 4);
    if (name === 'link') return null;
    if (name === 'TREE') {
      treeExtension = buf.subarray(off + 8, off + 8 + size);
      rootTree = cachedRoot(treeExtension, oidBytes);
    }
    off += 8 + size;
  }
  return { entries, rootTree, treeExtension, version, extensions };
}

/**
 * An entry's path and where the next entry starts, or null when cut short. Versions 2-3: the
 * path's length in the flags (0xfff: NUL-ended), NULs to a multiple of 8 bytes after it.
 * Version 4: the previous path less N bytes (N in git's varint), then a NUL-ended suffix.
 */
function entryName(
  buf: Buffer,
  version: number,
  off: number,
  nameAt: number,
  flags: number,
  previous: Buffer,
): [Buffer, number] | null {
  if (version === 4) {
    let p = nameAt;
    let byte = buf[p++]!;
    let strip = byte & 0x7f;
    while (byte & 0x80) {
      byte = buf[p++]!;
      strip = ((strip + 1) << 7) | (byte & 0x7f);
    }
    const end = buf.indexOf(0, p);
    if (end < 0 || strip > previous.length) return null;
    return [Buffer.concat([previous.subarray(0, previous.length - strip), buf.subarray(p, end)]), end + 1];
  }
  const length = flags & 0xfff;
  const end = length < 0xfff ? nameAt + length : buf.indexOf(0, nameAt);
  if (end < 0 || end > buf.length) return null;
  return [buf.subarray(nameAt, end), off + ((end - off + 8) & ~7)];
}

/** The root of a TREE extension: "" NUL, entry count (-1: not valid), space, subtrees, LF, then the tree. */
function cachedRoot(data: Buffer, oidBytes: number): string | null {
  if (data[0] !== 0) return null;
  const lf = data.indexOf(10);
  if (lf < 0) return null;
  const entries = Number(data.toString('latin1', 1, lf).split(' ')[0]);
  if (!(entries >= 0) || lf + 1 + oidBytes > data.length) return null;
  return data.toString('hex', lf + 1, lf + 1 + oidBytes);
}

/** The stamps of `wanted` paths (stage 0 entries) in the index at `indexPath`; null as readIndex. */
export function indexStamps(
  indexPath: string,
  oidBytes: number,
  wanted: ReadonlySet<string>,
): Map<string, string> | null {
  const read = readIndex(indexPath, oidBytes, wanted);
  if (read === null) return null;
  return new Map(read.entries.filter((e) => e.stage === 0).map((e) => [e.path, e.stamp]));
}
