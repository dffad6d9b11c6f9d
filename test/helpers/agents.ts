import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

// Where the pinned agent CLIs of the tests live. test/agents/install.mjs puts them in a cache
// folder outside the checkout (the README's `npm test` runs it first); this module finds the
// same folder by the same rule. A missing install is a failure with the way out in the
// message, never a skipped test.

const AGENTS = join(import.meta.dirname, '..', 'agents');
const MARKER = '.lanes-agents-installed';

/** The install folder: `$LANES_AGENTS_CACHE`, else the XDG cache keyed by the lockfile's hash. */
export function agentsDir(): string {
  const fromEnv = process.env.LANES_AGENTS_CACHE;
  if (fromEnv) return fromEnv;
  const digest = createHash('sha256')
    .update(readFileSync(join(AGENTS, 'package-lock.json')))
    .digest('hex')
    .slice(0, 16);
  const cacheRoot = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(cacheRoot, 'lanes', 'agents', digest);
}

/** The folder holding the `claude` and `codex` executables. */
export function agentsBinDir(): string {
  const dir = agentsDir();
  if (!existsSync(join(dir, MARKER))) {
    throw new Error(
      `the pinned agent CLIs are not installed in ${dir}: run node test/agents/install.mjs (npm test does it first)`,
    );
  }
  return join(dir, 'node_modules', '.bin');
}

function binary(name: 'claude' | 'codex'): string {
  const path = join(agentsBinDir(), name);
  if (!existsSync(path)) throw new Error(`${path} is missing: run node test/agents/install.mjs`);
  return path;
}

/** The pinned Claude Code CLI (a native executable). */
export const claudeBin = (): string => binary('claude');

/** The pinned Codex CLI (a node launcher that execs the native `codex`). */
export const codexBin = (): string => binary('codex');
