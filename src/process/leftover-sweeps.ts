import { RequestThread } from './request-thread.js';

// The leftover sweep (leftovers.ts) for many runs at once. A look at /proc reads every
// process's environment (~5 ms with a hundred lanes running); when a hundred executors
// exit together, one look an exit held the coordinator's thread for a few hundred
// milliseconds (docs/PERFORMANCE.md "Many lanes"). The exits reported in one turn of the
// event loop are swept with one look (those reported while it runs, with the next), and
// each exit still waits for its sweep: nothing of a lane runs on after its executor's exit.
// The look reads in a thread of its own: only the processes that name a run come back to
// the coordinator's thread.

/** A process whose environment names runs: the values of its LANES_RUN variables. */
export interface MarkedProcess {
  pid: number;
  runs: string[];
}

/** One look at /proc: every process but `self` whose environment names a run (tests count them). */
export interface ProcLook {
  look(self: number): Promise<MarkedProcess[]>;
  /** Makes ready what a look needs, before the first one. */
  warm?(): void;
}

const MARKER = 'LANES_RUN=';

/**
 * The values of `marker`'s variables in an environment (NUL-separated `NAME=value`), only
 * where a variable begins: a value that merely holds the text is not one. Self-contained: the
 * look thread runs its source.
 */
export function markedRuns(environ: string, marker: string): string[] {
  const runs: string[] = [];
  for (let at = environ.indexOf(marker); at !== -1; at = environ.indexOf(marker, at + 1)) {
    if (at > 0 && environ[at - 1] !== '\0') continue; // (inside another variable's value)
    const end = environ.indexOf('\0', at);
    runs.push(environ.slice(at + marker.length, end === -1 ? undefined : end));
  }
  return runs;
}

// (the reads, ~300 files with a hundred lanes, one after the other in the thread: read with
// node's promises they were ~1,500 callbacks a look on the coordinator's thread)
const LOOK_SOURCE = `
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const markedRuns = ${markedRuns.toString()};
parentPort.on('message', ({ id, self, marker }) => {
  let names;
  try {
    names = fs.readdirSync('/proc');
  } catch (error) {
    parentPort.postMessage({ id, error: String((error && error.message) || error) });
    return;
  }
  const found = [];
  for (const name of names) {
    if (!/^[0-9]+$/.test(name) || Number(name) === self) continue;
    let environ;
    try {
      environ = fs.readFileSync('/proc/' + name + '/environ', 'latin1');
    } catch {
      continue; // (gone meanwhile, or another user's: nothing to read)
    }
    const runs = markedRuns(environ, marker);
    if (runs.length > 0) found.push({ pid: Number(name), runs });
  }
  parentPort.postMessage({ id, value: found });
});
`;

/** Looks at /proc from a thread of its own (process/request-thread.ts). */
export function lookThread(): ProcLook {
  const thread = new RequestThread<MarkedProcess[]>(LOOK_SOURCE, 'leftover look');
  return { look: (self) => thread.ask({ self, marker: MARKER }), warm: () => thread.warm() };
}

/**
 * Kills (SIGKILL) every process of this user but `self` whose LANES_RUN is one of `runs`;
 * the pids stopped, by run. Again until a look finds none: one found may have forked just
 * before it was killed.
 */
export async function sweepRuns(
  proc: ProcLook,
  runs: ReadonlySet<string>,
  self: number,
): Promise<Map<string, number[]>> {
  const stopped = new Map<string, number[]>([...runs].map((run) => [run, []]));
  for (let round = 0; round < 20; round++) {
    let marked: MarkedProcess[];
    try {
      marked = await proc.look(self);
    } catch {
      return stopped;
    }
    let found = 0;
    for (const { pid, runs: named } of marked) {
      const run = named.find((r) => runs.has(r));
      if (run === undefined) continue;
      try {
        process.kill(pid, 'SIGKILL');
        found++;
        const of = stopped.get(run)!;
        if (!of.includes(pid)) of.push(pid);
      } catch {
        // gone meanwhile
      }
    }
    if (found === 0) break;
  }
  return stopped;
}

/** Sweeps the runs that ask while no sweep runs together, once. */
export class LeftoverSweeps {
  private waiting = new Map<string, ((pids: number[]) => void)[]>();
  private sweeping = false;

  constructor(
    private readonly proc: ProcLook = lookThread(),
    private readonly self: number = process.pid,
  ) {}

  /** Starts the look's thread before the first exit (a start is ~15 ms of this thread). */
  warm(): void {
    this.proc.warm?.();
  }

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
    const stopped = await sweepRuns(this.proc, new Set(waiting.keys()), this.self).catch(() => new Map());
    this.sweeping = false;
    for (const [run, resolves] of waiting) for (const resolve of resolves) resolve(stopped.get(run) ?? []);
    if (this.waiting.size > 0) void this.sweep(); // (those that asked meanwhile)
  }
}

/** The coordinator's sweeps (one process, one /proc). */
export const leftoverSweeps = new LeftoverSweeps();
