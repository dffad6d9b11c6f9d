import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIG_FILE, DEFAULT_CONFIG, parseConfigText } from '../core/settings/config.js';
import type { Config } from '../core/settings/config.js';

// The repository's config file (lanes.config.json at the work tree's top); the format and
// its checks are the core's (src/core/config.ts).

/** Reads the repo root's config file, or the defaults when there is none. */
export function loadConfig(repoRoot: string): Config {
  const path = join(repoRoot, CONFIG_FILE);
  if (!existsSync(path)) return DEFAULT_CONFIG;
  return parseConfigText(readFileSync(path, 'utf8'), path);
}
