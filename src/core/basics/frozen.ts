// A parsed state file handed to every reader as one object (store/batch-files.ts,
// batch-store.ts), frozen all the way down: a tick reads the plan and the record several
// times, and parsing a 1000-child text again for each reader was most of an idle tick (bench
// tick_scaling). A reader that changed what it was given would change it for every other
// one; frozen, it throws instead (ESM is strict).

export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value as object)) deepFreeze(inner);
  }
  return value;
}
