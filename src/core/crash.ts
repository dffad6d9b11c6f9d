// Test facility (docs/RELIABILITY.md): LANES_CRASH_AT=<point>[:<n>] makes the process exit
// abruptly (no cleanup, no finally blocks) the n-th time it reaches that named point.

const counts = new Map<string, number>();

export function crashPoint(point: string): void {
  const spec = process.env.LANES_CRASH_AT;
  if (!spec) return;
  const [name, nth] = spec.split(':');
  if (name !== point) return;
  const seen = (counts.get(point) ?? 0) + 1;
  counts.set(point, seen);
  if (seen === Number(nth ?? '1')) {
    process.stderr.write(`lanes: crash point ${point}:${seen} reached (LANES_CRASH_AT)\n`);
    process.kill(process.pid, 'SIGKILL');
  }
}
