import * as fs from 'node:fs';

// What an executor leaves running outside its process group — a `setsid` daemon, a server
// started with nohup in a session of its own — is found by the variable lanes set for its
// run (`LANES_RUN=<run id>`, inherited by every process it starts) and stopped when the
// executor itself exits: the executor's exit is the exit, and nothing of a lane runs on
// after it (docs/DECISIONS.md "No dead ends"). Linux's /proc; elsewhere nothing is found.

/** The variable and value every process of one run carries. */
export function runMarker(runId: string): string {
  return `LANES_RUN=${runId}`;
}

/**
 * Kills (SIGKILL) every process of this user but `self` whose environment holds `entry`;
 * returns their pids. Self-contained on purpose: the process helper runs this very
 * function (git/runner/helper-source.ts embeds its source).
 */
export function sweepProcesses(
  files: { readdirSync(path: string): string[]; readFileSync(path: string, encoding: 'latin1'): string },
  entry: string,
  self: number,
): number[] {
  const stopped: number[] = [];
  // Again until a look finds none: one found may have forked just before it was killed.
  for (let round = 0; round < 20; round++) {
    let pids: string[];
    try {
      pids = files.readdirSync('/proc').filter((name) => /^\d+$/.test(name));
    } catch {
      return stopped;
    }
    let found = 0;
    for (const name of pids) {
      const pid = Number(name);
      if (pid === self) continue;
      let environ: string;
      try {
        environ = files.readFileSync(`/proc/${name}/environ`, 'latin1');
      } catch {
        continue; // gone meanwhile, or another user's
      }
      if (!environ.split('\0').includes(entry)) continue;
      try {
        process.kill(pid, 'SIGKILL');
        found++;
        if (!stopped.includes(pid)) stopped.push(pid);
      } catch {
        // gone meanwhile
      }
    }
    if (found === 0) break;
  }
  return stopped;
}

/** Stops what the run `runId` left running in this process's view; their pids. */
export function stopLeftovers(runId: string): number[] {
  return sweepProcesses(fs, runMarker(runId), process.pid);
}

/** The transcript's note of what was stopped (nothing when nothing was). */
export function leftoverNote(pids: readonly number[]): string {
  if (pids.length === 0) return '';
  return `\n[lanes] stopped ${pids.length} process${pids.length === 1 ? '' : 'es'} the executor left running (pid ${pids.join(', ')})\n`;
}
