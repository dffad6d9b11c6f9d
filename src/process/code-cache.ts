import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import Module from 'node:module';
import { basename, dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script, constants } from 'node:vm';
import { ExitCode } from '../core/basics/errors.js';

// V8's code cache for the bundle's own chunks (dist/lanes/*.js, CommonJS): what Node 22's
// `module.enableCompileCache()` does, for node 20, which has none for any module
// (docs/DECISIONS.md "First frame: the bundle is CommonJS, with a code cache").
//
// - Where: `.code-cache/<node version>-<arch>/<profile>/<chunk>.<size>.<mtime>.bin` beside
//   the bundle. The cache is code: it lives with the code, writable by whoever can write the
//   bundle; where that folder cannot be written, every start compiles, as before.
// - When: written by the first process of its profile that runs without it, a while after
//   it started (or at its exit), so that the functions it called are in the cache too. A
//   profile (the command, and whether it draws) keeps each kind of run's own functions: a
//   `--version` compiles little of the plan chunk that a `start` runs.
// - Which: V8 checks only the length of the source a cache was made from, not its text. The
//   chunks' names hold a hash of their text, and the cache's name the file's size and
//   modification time, so a chunk changed in place is not run from another's code. A cache
//   V8 rejects (other V8 flags, a torn file) is as if absent: compiled and written again.

/** How long after an uncached chunk (the first since the last write) a process writes the caches it lacked. */
const WRITE_AFTER_MS = 1_500;

type Compile = (this: Module, content: string, filename: string) => unknown;

interface CacheState {
  readonly folder: string;
  readonly pending: Map<string, Script>;
  timer?: NodeJS.Timeout;
}

/** The folder of the caches kept for runs of `profile` of the bundle in `bundleDir`, for this node. */
export function codeCacheFolder(bundleDir: string, profile: string): string {
  const name = profile.replace(/[^a-z0-9.]/gi, '_'); // (letters, digits and dots; `_` for the rest)
  return join(bundleDir, '.code-cache', `${process.version}-${process.arch}`, name);
}

/**
 * Compiles every CommonJS file of the folder `entryUrl` is in through V8's code cache, the
 * one kept for runs of `profile` (codeCacheFolder). A no-op where that folder holds no
 * CommonJS (tsc's ES modules, the tests' sources).
 */
export function useCodeCache(entryUrl: string, profile: string): void {
  const bundle = dirname(fileURLToPath(entryUrl)) + sep;
  const state: CacheState = { folder: codeCacheFolder(bundle, profile), pending: new Map() };
  const proto = Module.prototype as unknown as { _compile: Compile };
  const plain = proto._compile;
  proto._compile = function compileWithCache(content, filename) {
    if (dirname(filename) + sep !== bundle) return plain.call(this, content, filename);
    return runChunk(this, state, content, filename);
  };
  // (not after bad input, exit 2: a mistyped command writes nothing, not even a cache)
  process.once('exit', (code) => {
    if (code !== ExitCode.badInput) writePending(state);
  });
}

function runChunk(module: Module, state: CacheState, content: string, filename: string): unknown {
  const { size, mtimeNs } = statSync(filename, { bigint: true });
  const file = join(state.folder, `${basename(filename)}.${size}.${mtimeNs}.bin`);
  const cachedData = readCache(file);
  // (the wrapper node itself puts around a CommonJS file; a shebang line is a comment to it)
  const source = Module.wrap(content.startsWith('#!') ? `//${content}` : content);
  const script = new Script(source, {
    filename,
    ...(cachedData ? { cachedData } : {}),
    importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  if (!cachedData || script.cachedDataRejected) schedule(state, file, script);
  const wrapper = script.runInThisContext({ displayErrors: true }) as (...args: unknown[]) => unknown;
  const require = Module.createRequire(filename);
  return wrapper.call(module.exports, module.exports, require, module, filename, dirname(filename));
}

function readCache(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

function schedule(state: CacheState, file: string, script: Script): void {
  state.pending.set(file, script);
  state.timer ??= setTimeout(() => writePending(state), WRITE_AFTER_MS).unref();
}

/**
 * Writes each cache this process lacked, whole or not at all (a rename over the old). A chunk
 * first loaded later (the batch under a TUI, after its confirmation) is written in turn.
 */
function writePending(state: CacheState): void {
  state.timer = undefined;
  if (state.pending.size === 0) return;
  try {
    mkdirSync(state.folder, { recursive: true });
    for (const [file, script] of state.pending) {
      const temp = `${file}.${process.pid}.tmp`;
      writeFileSync(temp, script.createCachedData());
      renameSync(temp, file);
    }
  } catch {
    // A folder lanes cannot write in: the chunks compile from source, as they did before.
  } finally {
    state.pending.clear();
  }
}
