import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, realpathSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { LanesError } from '../../core/basics/errors.js';
import { machineRepoPath } from '../protocol.js';

// Where the side works on its machine: the root lanes keeps there (`~` is this user's home),
// made on first use, and the bare repository cache of each repository under it. Nothing an
// op writes or removes is outside the root (checked here, not trusted from the request).

/** A request the side cannot run: the answer `{ok:false, code:'bad_request'}`, exit 2. */
export class BadRequest extends LanesError<'bad_request'> {
  constructor(message: string) {
    super('bad_request', message, 2);
  }
}

export interface Place {
  /** The root, absolute and real. */
  root: string;
  /** The repository cache (bare), when the request names a repository. */
  cache: string | null;
}

/** `~` and `~/…` are the home of the user the side runs as. */
export function expandRoot(root: string): string {
  if (root === '~') return homedir();
  if (root.startsWith('~/')) return join(homedir(), root.slice(2));
  return root;
}

/** The root made (its `sock/` 0700: the forwarded hook sockets), and the repository's cache made bare when missing. */
export function placeOf(root: string, repo: string | undefined): Place {
  const wanted = resolve(expandRoot(root));
  mkdirSync(wanted, { recursive: true, mode: 0o700 });
  const real = realpathSync.native(wanted);
  mkdirSync(join(real, 'sock'), { recursive: true, mode: 0o700 });
  chmodSync(join(real, 'sock'), 0o700); // (made before by someone else, or under another umask)
  if (repo === undefined) return { root: real, cache: null };
  const cache = machineRepoPath(real, repo);
  if (!existsSync(join(cache, 'HEAD'))) makeCache(cache);
  return { root: real, cache };
}

/**
 * The repository's cache, made bare. Ops side by side on a new machine each find it missing,
 * and two `git init` of one folder at once fail on its config's lock: each op makes a
 * repository of its own beside it and renames it into place, and one that finds the cache
 * there by then removes its own (test/machines/side/side-session-race.test.ts).
 */
function makeCache(cache: string): void {
  mkdirSync(dirname(cache), { recursive: true });
  const made = `${cache}.new-${process.pid}`;
  const init = (dir: string) =>
    execFileSync('git', ['init', '--quiet', '--bare', dir], { stdio: ['ignore', 'ignore', 'pipe'] });
  init(made);
  try {
    renameSync(made, cache); // (over an empty folder too: one a start cut short left)
  } catch {
    rmSync(made, { recursive: true, force: true });
    if (!existsSync(join(cache, 'HEAD'))) init(cache); // (a folder with files but no repository)
  }
}

export function needCache(place: Place, op: string): string {
  if (place.cache === null) throw new BadRequest(`${op}: the request names no repository (repo)`);
  return place.cache;
}

/**
 * True when `path` is the (real) root or inside it: the deepest folder of it that exists,
 * symlinks resolved, is inside (no link leads out, `..` is read as the path says).
 */
export function isInside(root: string, path: string): boolean {
  let probe = resolve(path);
  while (!existsSync(probe)) probe = resolve(probe, '..');
  const rel = relative(root, realpathSync.native(probe));
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** Refuses a path outside the root (what an op would write or remove there). */
export function insideRoot(place: Place, path: string, what: string): string {
  if (!isInside(place.root, path))
    throw new BadRequest(`${what} ${JSON.stringify(path)} is outside the root ${place.root}`);
  return resolve(path);
}
