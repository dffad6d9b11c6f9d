import { closeSync, constants, fstatSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';

// Whether every change of a file in a folder moves its change time past one looked at: a
// file system with fine-grained times, or Linux's multigrain times (6.13 on: ext4, xfs,
// btrfs, tmpfs). With times in clock ticks, a file rewritten in the tick it was looked at
// can keep its stat data (git's "racily clean" index entries). A file's stat data then
// proves it unchanged only where this holds. Found out once a process for each folder:
// three writes to a probe file, each after a look at its change time, must each move it.

const fine = new Map<string, boolean>();

/** True when every change made after a look at a file in `dir` moves its change time. */
export function changeTimesAlwaysMove(dir: string): boolean {
  let known = fine.get(dir);
  if (known === undefined) fine.set(dir, (known = probe(dir)));
  return known;
}

function probe(dir: string): boolean {
  const path = join(dir, `.lanes-stamp-probe.${process.pid}.${randomBytes(4).toString('hex')}`);
  let fd: number;
  try {
    fd = openSync(
      path,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o600,
    );
  } catch {
    return false;
  }
  try {
    for (let i = 0; i < 3; i++) {
      const before = fstatSync(fd, { bigint: true }).ctimeNs;
      writeSync(fd, 'x');
      if (fstatSync(fd, { bigint: true }).ctimeNs === before) return false;
    }
    return true;
  } catch {
    return false;
  } finally {
    try {
      closeSync(fd);
      rmSync(path, { force: true });
    } catch {
      // (a folder that lets files be made but not removed: the probe stays; reads go on)
    }
  }
}
