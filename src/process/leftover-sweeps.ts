import * as fs from 'node:fs';

// The leftover sweep (leftovers.ts) for many runs at once. A look at /proc reads every
// process's environment (~5 ms with a hundred lanes running); when a hundred executors
// exit together, one look an exit held the coordinator's thread for a few hundred
// milliseconds (docs/PERFORMANCE.md "Many lanes"). The exits reported in one turn of the
// event loop are swept with one look (those reported while it runs, with the next), its
// reads off the thread, and each exit still waits for its sweep: nothing of a lane runs on
// after its executor's exit.

/** What a sweep reads: the real file system, or one that counts its looks (tests). */
export interface ProcFiles {
  readdir(path: string): Promise<string[]>;
  readFile(path: string, encoding: 'latin1'): Promise<string>;
}

const MARKER = 'LANES_RUN=';

/**
 * Kills (SIGKILL) every process of this user but `self` whose LANES_RUN is one of `runs`;
 * the pids stopped, by run. Again until a look finds none: one found may have forked just
 * before it was killed. Its reads go to libuv's threads: the coordinator's thread only
 * takes their answers, so keys are read in between.
 */
export async function sweepRuns(
  files: ProcFiles,
  runs: ReadonlySet<string>,
  self: number,
): Promise<Map<string, number[]>> {
  const stopped = new Map<string, number[]>([...runs].map((run) => [run, []]));
  for (let round = 0; round < 20; round++) {
    let pids: string[];
    try {
      pids = (await files.readdir('/proc')).filter((name) => /^\d+$/.test(name) && Number(name) !== self);
    } catch {
      return stopped;
    }
    const environs = await Promise.all(
      // (gone meanwhile, or another user's: nothing to read)
      pids.map((name) => files.readFile(`/proc/${name}/environ`, 'latin1').catch(() => '')),
    );
    let found = 0;
    environs.forEach((environ, i) => {
      const run = runOf(environ, runs);
      if (run === null) return;
      const pid = Number(pids[i]);
      try {
        process.kill(pid, 'SIGKILL');
        found++;
        const of = stopped.get(run)!;
        if (!of.includes(pid)) of.push(pid);
      } catch {
        // gone meanwhile
      }
    });
    if (found === 0) break;
  }
  return stopped;
}

/** The run among `runs` whose marker the environment holds as a whole variable, if any. */
function runOf(environ: string, runs: ReadonlySet<string>): string | null {
  for (let at = environ.indexOf(MARKER); at !== -1; at = environ.indexOf(MARKER, at + 1)) {
    if (at > 0 && environ[at - 1] !== '\0') continue; // (inside another variable's value)
    const end = environ.indexOf('\0', at);
    const run = environ.slice(at + MARKER.length, end === -1 ? undefined : end);
    if (runs.has(run)) return run;
  }
  return null;
}

/** Sweeps the runs that ask while no sweep runs together, once. */
export class LeftoverSweeps {
  private waiting = new Map<string, ((pids: number[]) => void)[]>();
  private sweeping = false;

  constructor(
    private readonly files: ProcFiles = fs.promises,
    private readonly self: number = process.pid,
  ) {}

  /** Stops what the run left running; resolves with their pids once they are stopped. */
  stop(runId: string): Promise<number[]> {
    return new Promise((resolve) => {
      if (this.waiting.size === 0 && !this.sweeping) setImmediate(() => void this.sweep());
      const of = this.waiting.get(runId);
      if (of) of.push(resolve);
      else this.waiting.set(runId, [resolve]);
    });
  }

  private async sweep(): Promise<void> {
    const waiting = this.waiting;
    this.waiting = new Map();
    this.sweeping = true;
    // (a sweep that fails never keeps an exit from being reported)
    const stopped = await sweepRuns(this.files, new Set(waiting.keys()), this.self).catch(() => new Map());
    this.sweeping = false;
    for (const [run, resolves] of waiting) for (const resolve of resolves) resolve(stopped.get(run) ?? []);
    if (this.waiting.size > 0) void this.sweep(); // (those that asked meanwhile)
  }
}

/** The coordinator's sweeps (one process, one /proc). */
export const leftoverSweeps = new LeftoverSweeps();
