import { readFileSync } from 'node:fs';

// Telling whether a process we started before a restart is still the same process.

/** The kernel's start time of a process (clock ticks since boot), to tell pid reuse apart. */
export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 2 (comm) may hold spaces and parentheses: count fields after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

/** True when `pid` runs and (when known) started at `startTime`. */
export function isSameProcessAlive(pid: number, startTime: string | null): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  const now = processStartTime(pid);
  if (now === null) return true; // no /proc: kill(0) is all we can know
  return startTime === null || now === startTime;
}
