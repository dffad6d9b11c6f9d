import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { badInput } from '../core/basics/errors.js';
import {
  DIRECTIVE_FILES,
  mergeLaneDirectives,
  parseLaneDirectives,
} from '../core/settings/lane-directives.js';
import type { LaneDirectives } from '../core/settings/lane-directives.js';

// Reads the "Lane …:" directives of the repository's root AGENTS.md and CLAUDE.md (the
// rules: src/core/lane-directives.ts). Files that are not there give no directives.

/** Larger files are not instructions for people; refusing them keeps a start quick. */
const MAX_BYTES = 1024 * 1024;

export function readLaneDirectives(repoRoot: string): LaneDirectives {
  const found: LaneDirectives[] = [];
  for (const name of DIRECTIVE_FILES) {
    const path = join(repoRoot, name);
    let size: number;
    try {
      const stat = statSync(path);
      if (!stat.isFile()) continue;
      size = stat.size;
    } catch {
      continue; // not there (or a dangling link): no directives from it
    }
    if (size > MAX_BYTES)
      throw badInput(
        'directive_invalid',
        `${path} is larger than 1 MB; lanes reads its Lane directives only from a smaller file`,
      );
    found.push(parseLaneDirectives(readFileSync(path, 'utf8'), name));
  }
  return mergeLaneDirectives(found);
}
