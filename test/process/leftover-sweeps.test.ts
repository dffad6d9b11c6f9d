import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { LeftoverSweeps, lookThread, markedRuns, type ProcLook } from '../../src/process/leftover-sweeps.js';
import { runMarker } from '../../src/process/leftovers.js';
import { until } from '../helpers/until.js';

// What executors left running is stopped at their exit (process/leftovers.ts); when many
// exit together, one look at /proc serves them all instead of one look an exit.

const started: ChildProcess[] = [];
afterEach(() => {
  for (const child of started.splice(0)) child.kill('SIGKILL');
});

/** A process carrying the run's marker, as everything an executor starts does. */
function leftover(runId: string): ChildProcess {
  const [name, value] = runMarker(runId).split('=') as [string, string];
  const child = spawn('sleep', ['60'], { env: { ...process.env, [name]: value }, stdio: 'ignore' });
  started.push(child);
  return child;
}

/** Its environment (what a sweep reads) holds the marker: it has exec'd. */
function marked(child: ChildProcess, runId: string): boolean {
  try {
    return fs.readFileSync(`/proc/${child.pid}/environ`, 'latin1').split('\0').includes(runMarker(runId));
  } catch {
    return false;
  }
}

function gone(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** The real /proc, looked at from the look thread, with its looks counted. */
function countingFiles(): ProcLook & { looks: number } {
  const thread = lookThread();
  const files = {
    looks: 0,
    look: (self: number) => {
      files.looks++;
      return thread.look(self);
    },
  };
  return files;
}

const unique = () => `${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`;

describe('leftover sweeps', () => {
  it('stops what every run exiting together left running, with one sweep for all of them', async () => {
    const runs = ['a', 'b', 'c', 'd', 'e'].map((r) => `${r}-${unique()}`);
    const children = runs.map(leftover);
    const other = leftover(`other-${unique()}`); // (a run still going: left alone)
    await until(() => children.every((c, i) => marked(c, runs[i]!)), 'the leftovers to start');
    const files = countingFiles();
    const sweeps = new LeftoverSweeps(files);
    const stopped = await Promise.all(runs.map((run) => sweeps.stop(run)));
    expect(stopped).toEqual(children.map((c) => [c.pid]));
    await until(() => children.every(gone), 'the leftovers to be gone');
    expect(gone(other)).toBe(false);
    // One look that finds them, one that finds none: not two for each run.
    expect(files.looks).toBe(2);
  });

  it('matches a run by its whole marker, not one that begins the same', async () => {
    const run = `r-${unique()}`;
    const longer = leftover(`${run}x`);
    await until(() => marked(longer, `${run}x`), 'the process to start');
    const files = countingFiles();
    expect(await new LeftoverSweeps(files).stop(run)).toEqual([]);
    expect(gone(longer)).toBe(false);
  });

  it('reads a run only from a variable of its own, wherever it stands in the environment', () => {
    const env = ['A=1', 'LANES_RUN=first', 'B=LANES_RUN=inside', 'LANES_RUN=last'].join('\0');
    expect(markedRuns(env, 'LANES_RUN=')).toEqual(['first', 'last']);
    expect(markedRuns('LANES_RUN=only', 'LANES_RUN=')).toEqual(['only']);
    expect(markedRuns('XLANES_RUN=no\0', 'LANES_RUN=')).toEqual([]);
  });
});
