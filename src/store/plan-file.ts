import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { badInput } from '../core/basics/errors.js';
import { parsePlanText } from '../core/plan/plan.js';
import type { Plan, YamlParser } from '../core/plan/plan.js';

// A plan file the user wrote (JSON or YAML); the format and its checks are the core's
// (src/core/plan.ts).

/** Reads and checks a plan file; a file that cannot be read is bad input like a bad plan. */
export function loadPlan(path: string): Plan {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const why = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : String(error);
    throw badInput('plan_invalid', `plan ${path}: cannot read it (${why})`);
  }
  return parsePlanFileText(text, path);
}

/** parsePlanText with the YAML parser loaded when the file needs it. */
export function parsePlanFileText(text: string, source: string): Plan {
  return parsePlanText(text, source, /\.ya?ml$/i.test(source) ? loadYaml() : null);
}

// The YAML parser is loaded only for YAML plans: it is a fifth of `plan check`'s start-up
// time, and a JSON plan never needs it (require keeps loadPlan synchronous).
let yaml: YamlParser | undefined;
function loadYaml(): YamlParser {
  yaml ??= createRequire(import.meta.url)('yaml') as YamlParser;
  return yaml;
}
