import { appendFileSync } from 'node:fs';

// Test facility (docs/RELIABILITY.md): LANES_CRASH_AT=<point>[@<detail>][:<n>] makes the
// process exit abruptly (SIGKILL: no cleanup, no finally blocks) the n-th time (default 1)
// it reaches that named point — with `@<detail>`, only reaches whose detail contains that
// text count (the atomic write names the file it writes: `@report.json`, `@/tasks/`).
// LANES_CRASH_COUNT_FILE=<file> appends one line per point reached ("<point>" or
// "<point> <detail>"), so a test can count how often a run reaches each point.
// A point name may itself hold colons (`tick-persist:commit`): the count is what follows
// the last colon when that is a number. LANES_STOP_AT=<same spec> stops the process there
// instead (SIGSTOP), so a test can act while lanes is held at that point and let it go on
// (SIGCONT): the moment between two steps made wide on purpose. LANES_CRASH_ARM=<point>:
// reaches count for LANES_CRASH_AT only once that point has been reached (a moment within a
// run, such as a way out taken, from which the steps are the same in every run).

const counts = new Map<string, number>();
let armed = !process.env.LANES_CRASH_ARM;

export interface CrashSpec {
  point: string;
  detail: string | null;
  nth: number;
}

export function parseCrashSpec(spec: string): CrashSpec {
  const colon = spec.lastIndexOf(':');
  const tail = colon < 0 ? '' : spec.slice(colon + 1);
  const counted = /^\d+$/.test(tail);
  const name = counted ? spec.slice(0, colon) : spec;
  const at = name.indexOf('@');
  return {
    point: at < 0 ? name : name.slice(0, at),
    detail: at < 0 ? null : name.slice(at + 1),
    nth: counted ? Number(tail) : 1,
  };
}

export function crashPoint(point: string, detail?: string): void {
  const countFile = process.env.LANES_CRASH_COUNT_FILE;
  if (countFile) appendFileSync(countFile, `${detail ? `${point} ${detail}` : point}\n`);
  if (!armed && point === process.env.LANES_CRASH_ARM) armed = true;
  const crash = process.env.LANES_CRASH_AT;
  if (crash && armed && reached(crash, point, detail, 'crash')) {
    const where = detail ? ` (${detail})` : '';
    process.stderr.write(`lanes: crash point ${crash} reached${where} (LANES_CRASH_AT)\n`);
    process.kill(process.pid, 'SIGKILL');
  }
  const stop = process.env.LANES_STOP_AT;
  if (stop && reached(stop, point, detail, 'stop')) process.kill(process.pid, 'SIGSTOP');
}

/** This reach of `point` is the one `spec` names (each kind of spec counts its own reaches). */
function reached(spec: string, point: string, detail: string | undefined, kind: string): boolean {
  const wanted = parseCrashSpec(spec);
  if (wanted.point !== point) return false;
  if (wanted.detail !== null && !(detail ?? '').includes(wanted.detail)) return false;
  const key = `${kind} ${point}`;
  const seen = (counts.get(key) ?? 0) + 1;
  counts.set(key, seen);
  return seen === wanted.nth;
}
