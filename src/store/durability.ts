import { execFileSync } from 'node:child_process';
import { dirname } from 'node:path';
import { git } from '../git/runner/git.js';

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

const flushByStateDir = new Map<string, boolean>();

/**
 * Whether writes under `stateDir` (`<git common dir>/lanes`) are flushed: read from the
 * repository's config on the first write that asks, once a process (commands that only
 * read pay nothing).
 */
export function stateFlush(stateDir: string): boolean {
  let flush = flushByStateDir.get(stateDir);
  if (flush === undefined) {
    flush = fsyncsReferences(coreFsyncOf(dirname(stateDir)));
    flushByStateDir.set(stateDir, flush);
  }
  return flush;
}

/**
 * stateFlush read ahead, through the process helper: the first write then forks nothing
 * (a fork of lanes itself blocks lanes for as long as git runs). A command that is about to
 * write calls it beside its other start-up reads; a failure leaves it to the first write.
 */
export function readStateFlush(stateDir: string): Promise<void> {
  let read = readsByStateDir.get(stateDir);
  if (!read) readsByStateDir.set(stateDir, (read = readFlush(stateDir)));
  return read;
}
const readsByStateDir = new Map<string, Promise<void>>();

async function readFlush(stateDir: string): Promise<void> {
  if (flushByStateDir.has(stateDir)) return;
  const gitDir = dirname(stateDir);
  const read = await git(gitDir, ['--git-dir', gitDir, 'config', '--get', 'core.fsync'], {
    okCodes: [1],
  }).catch(() => null);
  if (read === null || flushByStateDir.has(stateDir)) return;
  flushByStateDir.set(stateDir, fsyncsReferences(read.exitCode === 0 ? read.stdout.trim() : null));
}

function coreFsyncOf(gitDir: string): string | null {
  try {
    const out = execFileSync('git', ['--git-dir', gitDir, 'config', '--get', 'core.fsync'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return out.trim();
  } catch {
    return null; // (exit 1: not set)
  }
}
