// How durable lanes' state files are: as durable as the repository's own references. git
// (by default) flushes neither its loose objects nor its refs, so after a power loss the
// commits and branches a record names may be gone whether or not the record was flushed;
// a flushed record would only point at them. Every state write stays atomic (temp file and
// rename: a reader or a killed process sees the old bytes or the new), and is flushed
// (fsync of the file and of its folder) when git's `core.fsync` flushes references too
// (docs/DECISIONS.md "Durability follows git").

/** The `core.fsync` words that include the `reference` component (git's config docs). */
const WITH_REFERENCE = new Set(['reference', 'committed', 'added', 'all']);

/**
 * Whether a `core.fsync` value makes git flush reference updates. The words apply left to
 * right from git's default (which has no references): `none` clears, `-word` takes away.
 */
export function fsyncsReferences(coreFsync: string | null): boolean {
  let refs = false;
  for (const raw of (coreFsync ?? '').split(',')) {
    const word = raw.trim().toLowerCase();
    if (word === 'none') refs = false;
    else if (word.startsWith('-')) refs = refs && !WITH_REFERENCE.has(word.slice(1));
    else if (WITH_REFERENCE.has(word)) refs = true;
  }
  return refs;
}

let flushStateFiles = true;

/** Set once the repository is known (store/state-dir.ts findRepo); true until then. */
export function setStateFlush(flush: boolean): void {
  flushStateFiles = flush;
}

export function stateFlush(): boolean {
  return flushStateFiles;
}
