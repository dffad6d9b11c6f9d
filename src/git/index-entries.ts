import { readFileSync } from 'node:fs';
import type { BigIntStats } from 'node:fs';

// The stat data git recorded in an index file for some of its paths: what `git add` saw of
// each file when it hashed it (git's index format, versions 2 to 4: gitformat-index(5)).
// A file whose stat data is still that one is unchanged since git read it, wherever a
// change always moves the file's change time (see exit-tree.ts). Stamps here are git's
// own 32-bit fields: inode, size, mtime and ctime (seconds and nanoseconds).

const U32 = 2n ** 32n;
const NS = 1_000_000_000n;

function seconds(ns: bigint): string {
  return `${(ns / NS) % U32}.${ns % NS}`;
}

/** A file's stamp from its lstat, in the fields an index entry keeps. */
export function statStamp(st: BigIntStats): string {
  return `${st.ino % U32}:${st.size % U32}:${seconds(st.mtimeNs)}:${seconds(st.ctimeNs)}`;
}

/**
 * The stamps of `wanted` paths (stage 0 entries) in the index at `indexPath`. Null when the file is not an index this reads: a
 * version other than 2-4, a split index (its entries are partly in another file), or cut
 * short. A wanted path the index does not hold is left out.
 */
export function indexStamps(
  indexPath: string,
  oidBytes: number,
  wanted: ReadonlySet<string>,
): Map<string, string> | null {
  let buf: Buffer;
  try {
    buf = readFileSync(indexPath);
  } catch {
    return null;
  }
  if (buf.length < 12 || buf.toString('latin1', 0, 4) !== 'DIRC') return null;
  const version = buf.readUInt32BE(4);
  if (version < 2 || version > 4) return null;
  const count = buf.readUInt32BE(8);
  const stamps = new Map<string, string>();
  let off = 12;
  let previous: Buffer = Buffer.alloc(0);
  const fixed = 40 + oidBytes + 2; // (ten 32-bit fields, the object name, the flags)
  for (let i = 0; i < count; i++) {
    if (off + fixed > buf.length) return null;
    const flags = buf.readUInt16BE(off + 40 + oidBytes);
    const extended = version >= 3 && (flags & 0x4000) !== 0;
    const nameAt = off + fixed + (extended ? 2 : 0);
    let name: Buffer;
    let next: number;
    if (version === 4) {
      // (the path is the previous one less N bytes, then a NUL-ended suffix; N in git's varint)
      let p = nameAt;
      let byte = buf[p++]!;
      let strip = byte & 0x7f;
      while (byte & 0x80) {
        byte = buf[p++]!;
        strip = ((strip + 1) << 7) | (byte & 0x7f);
      }
      const end = buf.indexOf(0, p);
      if (end < 0 || strip > previous.length) return null;
      name = Buffer.concat([previous.subarray(0, previous.length - strip), buf.subarray(p, end)]);
      next = end + 1;
    } else {
      const length = flags & 0xfff;
      const end = length < 0xfff ? nameAt + length : buf.indexOf(0, nameAt);
      if (end < 0 || end > buf.length) return null;
      name = buf.subarray(nameAt, end);
      // (1-8 NULs pad each entry to a multiple of 8 bytes)
      next = off + ((end - off + 8) & ~7);
    }
    previous = name;
    const path = name.toString('utf8');
    if (((flags >> 12) & 3) === 0 && wanted.has(path)) {
      const ctime = BigInt(buf.readUInt32BE(off)) * NS + BigInt(buf.readUInt32BE(off + 4));
      const mtime = BigInt(buf.readUInt32BE(off + 8)) * NS + BigInt(buf.readUInt32BE(off + 12));
      const ino = buf.readUInt32BE(off + 20);
      const size = buf.readUInt32BE(off + 36);
      stamps.set(path, `${ino}:${size}:${seconds(mtime)}:${seconds(ctime)}`);
    }
    off = next;
  }
  // Extensions follow the entries (4-byte name, 32-bit size), then the checksum.
  while (off + 8 <= buf.length - oidBytes) {
    if (buf.toString('latin1', off, off + 4) === 'link') return null;
    off += 8 + buf.readUInt32BE(off + 4);
  }
  return stamps;
}
