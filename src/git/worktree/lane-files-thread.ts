import { rm } from 'node:fs/promises';
import { RequestThread } from '../../process/request-thread.js';

// A lane's files made and deleted by a thread of their own: a lane's checkout is tens of
// file creations (~0.1 ms each on a well-used ext4), a removal as many deletions, and the
// coordinator's thread, which also ticks, ends exits and draws, is where lanes runs short
// first (docs/PERFORMANCE.md "A lane checked out by lanes", "Lane files off the thread").
// One request is one message each way (process/request-thread.ts).
// - Writes (lane-checkout.ts): its files are made one after the other (created side by side
//   in one folder, they only wait on each other's lock). Folders are made one level at a
//   time, never a missing parent: a lane removed meanwhile is not made again. On any
//   failure what the request made is taken out again.
// - Removals (worktree-admin.ts): a folder already renamed away, deleted whole. node's own
//   `fs.promises.rm` walks it on the coordinator's thread (a callback for each lstat,
//   readdir, unlink and rmdir: ~3 ms a lane there); here it is one rmSync.

/** What an index entry keeps of a file's lstat (gitformat-index(5)), as bigints. */
export interface FileStat {
  ctimeNs: bigint;
  mtimeNs: bigint;
  dev: bigint;
  ino: bigint;
  uid: bigint;
  gid: bigint;
  size: bigint;
}

export interface NewFile {
  /** Its path below the root, '/'-separated. */
  path: string;
  data: Uint8Array;
  executable: boolean;
}

const SOURCE = `
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const { join } = require('node:path');
parentPort.on('message', ({ id, root, folders, files, remove }) => {
  if (remove !== undefined) {
    const failed = [];
    for (const path of remove) {
      try {
        fs.rmSync(path, { recursive: true, force: true });
      } catch {
        failed.push(path);
      }
    }
    parentPort.postMessage(failed.length ? { id, error: failed.join(', ') } : { id, value: [] });
    return;
  }
  const made = [];
  try {
    for (const folder of folders) {
      fs.mkdirSync(join(root, folder));
      made.push(folder);
    }
    const stats = files.map((file) => {
      const path = join(root, file.path);
      fs.writeFileSync(path, file.data, { flag: 'wx', mode: file.executable ? 0o777 : 0o666 });
      made.push(file.path);
      const s = fs.lstatSync(path, { bigint: true });
      return [s.ctimeNs, s.mtimeNs, s.dev, s.ino, s.uid, s.gid, s.size].map(String);
    });
    parentPort.postMessage({ id, value: stats });
  } catch (error) {
    for (const path of made.reverse()) fs.rmSync(join(root, path), { recursive: true, force: true });
    parentPort.postMessage({ id, error: String((error && error.message) || error) });
  }
});
`;

const thread = new RequestThread<string[][]>(SOURCE, 'lane files');

/** Starts the thread before the first lane needs it. */
export function warmLaneFilesThread(): void {
  thread.warm();
}

const ask = (message: {
  root?: string;
  folders?: readonly string[];
  files?: readonly NewFile[];
  remove?: readonly string[];
}) => thread.ask(message);

/**
 * Makes `folders` (parents first) and then `files` below `root`, which must exist; each
 * file's lstat after it was written, in order. Rejects, with nothing made, when any of it
 * fails.
 */
export async function writeNewFiles(
  root: string,
  folders: readonly string[],
  files: readonly NewFile[],
): Promise<FileStat[]> {
  const stats = await ask({ root, folders, files });
  return stats.map((stat) => {
    const [ctimeNs, mtimeNs, dev, ino, uid, gid, size] = stat.map(BigInt) as bigint[];
    return { ctimeNs: ctimeNs!, mtimeNs: mtimeNs!, dev: dev!, ino: ino!, uid: uid!, gid: gid!, size: size! };
  });
}

/**
 * Deletes each of `paths` and everything below it (nothing there: nothing done), in one
 * request (each message wakes the thread); never rejects.
 */
export function removeTree(...paths: string[]): Promise<void> {
  // (something left, or the thread gone: node's own walk, to which a path already gone is nothing)
  return ask({ remove: paths }).then(
    () => undefined,
    async () => {
      await Promise.all(
        paths.map((path) => rm(path, { recursive: true, force: true }).catch(() => undefined)),
      );
    },
  );
}
