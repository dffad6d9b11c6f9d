import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

// A branch's tip read from its loose ref file (`<common dir>/refs/heads/<name>`) instead of
// asking the object reader: a tick reads the batch branch's tip and lanes' branch tips
// several times, and each ask is a round trip to git that wakes its process (~1 ms here,
// docs/PERFORMANCE.md "Branch tips from their files"). git writes a loose ref by renaming
// its lock file over it, so a read sees the old tip or the new one, as git's own reads do; a
// loose ref wins over a packed one. Anything this does not read as git would (no loose
// file: packed or absent; a symbolic ref; a name that is not a plain path; refs not kept as
// files) is null: the caller asks git. A branch with neither a loose file nor any packed
// refs is not there at all.

/** A branch name whose loose file is exactly `refs/heads/<name>`: no `..`, no empty or dotted parts. */
const PLAIN_BRANCH = /^(?!.*(?:^|\/)\.)(?!.*\.lock(?:\/|$))[A-Za-z0-9._@+-]+(?:\/[A-Za-z0-9._@+-]+)*$/;
const TIP = /^([0-9a-f]{40}|[0-9a-f]{64})\n?$/;

export class LooseRefs {
  private commonDir: string | null | undefined;

  constructor(private readonly root: string) {}

  /** The repository's git directory when its refs are plain files there; read once. */
  private get dir(): string | null {
    if (this.commonDir === undefined) {
      const dir = join(this.root, '.git');
      let plain = false;
      try {
        plain = statSync(dir).isDirectory() && !existsSync(join(dir, 'reftable'));
      } catch {
        plain = false;
      }
      this.commonDir = plain ? dir : null;
    }
    return this.commonDir;
  }

  /**
   * True when the branch is surely not there: no loose file for it and no packed refs at all
   * (a lane's branch looked for before it is made). False: git must be asked.
   */
  surelyAbsent(branch: string): boolean {
    const dir = this.dir;
    if (dir === null || !PLAIN_BRANCH.test(branch)) return false;
    return !existsSync(join(dir, 'packed-refs')) && !existsSync(join(dir, 'refs', 'heads', branch));
  }

  /** The object name in the branch's loose ref file, or null when git must be asked. */
  branchTip(branch: string): string | null {
    const dir = this.dir;
    if (dir === null || !PLAIN_BRANCH.test(branch)) return null;
    try {
      return TIP.exec(readFileSync(join(dir, 'refs', 'heads', branch), 'latin1'))?.[1] ?? null;
    } catch {
      return null; // (no loose file: packed, or no such branch)
    }
  }
}
