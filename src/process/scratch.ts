import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isSameProcessAlive, processStartTime } from './process-info.js';

// Scratch folders in the system's temp folder, named after the process that made them (pid
// and /proc start time): `<prefix>-<pid>-<start>-XXXXXX`. The maker removes its own when
// done; one a killed process left is removed by the next lanes process that makes a folder
// of the same kind (once a process, not at every folder).

const swept = new Set<string>();

/** A new scratch folder; the first of each kind in a process sweeps up dead processes' ones. */
export function scratchDir(prefix: string): string {
  if (!swept.has(prefix)) {
    swept.add(prefix);
    sweepScratch(prefix);
  }
  const start = processStartTime(process.pid) ?? 'x';
  return mkdtempSync(join(tmpdir(), `${prefix}-${process.pid}-${start}-`));
}

/** Removes the `prefix` scratch folders of processes that no longer run. */
export function sweepScratch(prefix: string, dir = tmpdir()): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  const named = new RegExp(`^${prefix.replace(/[^a-z0-9]/gi, '\\$&')}-(\\d+)-(\\d+|x)-`);
  for (const name of names) {
    const match = named.exec(name);
    if (!match) continue;
    const start = match[2] === 'x' ? null : (match[2] as string);
    if (isSameProcessAlive(Number(match[1]), start)) continue;
    try {
      rmSync(join(dir, name), { recursive: true, force: true });
    } catch {
      // (another user's, on a temp folder users share: a machine lanes runs lanes on as several users)
    }
  }
}
