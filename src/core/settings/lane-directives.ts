import { badInput } from '../basics/errors.js';
import { ID_PATTERN } from '../basics/ids.js';
import { effortSchema, modelSchema, valueProblem } from '../plan/preference-values.js';

// The repository's own executor preferences: "Lane …:" lines in its root AGENTS.md or
// CLAUDE.md (docs/DECISIONS.md "Executor preferences"). Parsing is pure; the files are
// read by src/store/lane-directives-file.ts.

export const DIRECTIVE_FILES = ['AGENTS.md', 'CLAUDE.md'] as const;

export interface Directive<T> {
  value: T;
  /** `AGENTS.md:12`: where the line is, for messages and the confirmation screen. */
  where: string;
}

export interface LaneDirectives {
  maxParallel?: Directive<number>;
  executor?: Directive<string>;
  model?: Directive<string>;
  effort?: Directive<string>;
}

type Key = keyof LaneDirectives;

const NAMES: Record<string, Key> = {
  'max parallel': 'maxParallel',
  executor: 'executor',
  'executor model': 'model',
  'executor effort': 'effort',
};

const SPELLING: Record<Key, string> = {
  maxParallel: 'Lane max parallel',
  executor: 'Lane executor',
  model: 'Lane executor model',
  effort: 'Lane executor effort',
};

// "Lane executor model: opus", also as a list item and with **bold** (Markdown).
const LINE = /^\s*(?:[-*+]\s+)?lane (max parallel|executor|executor model|executor effort)\s*:\s*(.*?)\s*$/i;

function problemOf(key: Key, value: string): string | null {
  switch (key) {
    case 'maxParallel':
      return /^[1-9]\d{0,3}$/.test(value) ? null : 'must be a whole number > 0';
    case 'executor':
      return ID_PATTERN.test(value) ? null : 'must name an executor profile';
    case 'model':
      return valueProblem(modelSchema, value);
    case 'effort':
      return valueProblem(effortSchema, value);
  }
}

/** The directives of one file's text; a bad or contradicting value is an error (exit 2). */
export function parseLaneDirectives(text: string, file: string): LaneDirectives {
  const found: LaneDirectives = {};
  const problems: string[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const match = LINE.exec(raw.replaceAll('**', ''));
    if (!match) return;
    const key = NAMES[match[1]!.toLowerCase()]!;
    const value = match[2]!.replace(/^`(.*)`$/, '$1').trim();
    const where = `${file}:${i + 1}`;
    const problem = problemOf(key, value);
    if (problem) {
      problems.push(`${where}: "${SPELLING[key]}: ${value.slice(0, 80)}": ${problem}`);
      return;
    }
    const parsed = key === 'maxParallel' ? Number(value) : value;
    addDirective(found, key, { value: parsed, where }, problems);
  });
  if (problems.length) throw directiveError(problems);
  return found;
}

/** AGENTS.md and CLAUDE.md together: each directive from whichever says it; both must agree. */
export function mergeLaneDirectives(files: LaneDirectives[]): LaneDirectives {
  const merged: LaneDirectives = {};
  const problems: string[] = [];
  for (const directives of files)
    for (const key of Object.keys(directives) as Key[]) addDirective(merged, key, directives[key]!, problems);
  if (problems.length) throw directiveError(problems);
  return merged;
}

/** Takes `next` for `key` unless the key is there already; a different value there is a problem. */
function addDirective(
  into: LaneDirectives,
  key: Key,
  next: Directive<string | number>,
  problems: string[],
): void {
  const previous = into[key];
  if (!previous) (into as Record<Key, Directive<string | number>>)[key] = next;
  else if (previous.value !== next.value)
    problems.push(
      `${next.where}: ${SPELLING[key]} is "${next.value}" here but "${previous.value}" at ${previous.where}`,
    );
}

function directiveError(problems: string[]) {
  return badInput(
    'directive_invalid',
    `the repository's lane directives are invalid:\n${problems.map((p) => `  ${p}`).join('\n')}`,
  );
}
