import { createHash } from 'node:crypto';
import { closeSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import type { FileStat } from './lane-files-thread.js';

// An index file as `git reset --hard` writes it for a checkout of plain files
// (gitformat-index(5)): version 2, SHA-1 names, each entry's stat data as the file has it
// now, the cached tree (TREE extension) of every folder, then the checksum. It is written to
// `<index>.lock` (made exclusively, as git takes its lock) and renamed over `index`, so a git
// reading beside it sees the old index or the new one.

export interface CheckedOutFile {
  /** Its path in the tree, '/'-separated. */
  path: string;
  /** 0o100644 or 0o100755. */
  mode: number;
  /** Its blob's name (hex). */
  sha: string;
  /** Its lstat after it was written. */
  stat: FileStat;
}

/** A folder of the cached tree: its name ('' the root), its tree, its files in all, its folders. */
export interface CachedFolder {
  name: string;
  sha: string;
  files: number;
  folders: CachedFolder[];
}

const U32 = 2n ** 32n;
const NS = 1_000_000_000n;

function entry(file: CheckedOutFile): Buffer {
  const name = Buffer.from(file.path);
  // (the fixed part, the name, then 1-8 NULs to a multiple of 8 bytes)
  const size = (62 + name.length + 8) & ~7;
  const out = Buffer.alloc(size);
  const u32 = (value: bigint, at: number) => out.writeUInt32BE(Number(value % U32), at);
  const { stat } = file;
  u32(stat.ctimeNs / NS, 0);
  u32(stat.ctimeNs % NS, 4);
  u32(stat.mtimeNs / NS, 8);
  u32(stat.mtimeNs % NS, 12);
  u32(stat.dev, 16);
  u32(stat.ino, 20);
  out.writeUInt32BE(file.mode, 24);
  u32(stat.uid, 28);
  u32(stat.gid, 32);
  u32(stat.size, 36);
  out.write(file.sha, 40, 'hex');
  out.writeUInt16BE(Math.min(name.length, 0xfff), 60); // (stage 0, no flags)
  name.copy(out, 62);
  return out;
}

/** git's order of a folder's cached subtrees: shorter names first, then bytewise. */
function subtreeOrder(a: CachedFolder, b: CachedFolder): number {
  const [x, y] = [Buffer.from(a.name), Buffer.from(b.name)];
  return x.length - y.length || Buffer.compare(x, y);
}

function cachedTree(folder: CachedFolder, out: Buffer[]): void {
  out.push(Buffer.from(`${folder.name}\0${folder.files} ${folder.folders.length}\n`));
  out.push(Buffer.from(folder.sha, 'hex'));
  for (const sub of [...folder.folders].sort(subtreeOrder)) cachedTree(sub, out);
}

/** Writes the index of `files` (any order) with `root`'s cached tree (null: none) to `indexPath`. */
export function writeIndexFile(
  indexPath: string,
  files: readonly CheckedOutFile[],
  root: CachedFolder | null,
): void {
  const named = files.map((file) => ({ file, name: Buffer.from(file.path) }));
  const sorted = named.sort((a, b) => Buffer.compare(a.name, b.name)).map((n) => n.file);
  const header = Buffer.alloc(12);
  header.write('DIRC', 0, 'latin1');
  header.writeUInt32BE(2, 4);
  header.writeUInt32BE(sorted.length, 8);
  const parts = [header, ...sorted.map(entry)];
  if (root !== null) {
    const tree: Buffer[] = [];
    cachedTree(root, tree);
    const treeBody = Buffer.concat(tree);
    const treeHead = Buffer.alloc(8);
    treeHead.write('TREE', 0, 'latin1');
    treeHead.writeUInt32BE(treeBody.length, 4);
    parts.push(treeHead, treeBody);
  }
  const body = Buffer.concat(parts);
  const sum = createHash('sha1').update(body).digest();
  const lock = `${indexPath}.lock`;
  const fd = openSync(lock, 'wx');
  try {
    writeSync(fd, body);
    writeSync(fd, sum);
  } catch (error) {
    closeSync(fd);
    rmSync(lock, { force: true });
    throw error;
  }
  closeSync(fd);
  renameSync(lock, indexPath);
}
