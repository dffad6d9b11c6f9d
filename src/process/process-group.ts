// Executors and checks run in their own process group (started detached, or as the
// session leader of a pty), so stopping one stops everything it started too.

/** Signals a whole process group (the wrapper and everything the executor started). */
export function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}
