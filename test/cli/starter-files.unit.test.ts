import YAML from 'yaml';
import type { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { STARTER_PLAN, starterConfig } from '../../src/cli/starter-files.js';
import { parsePlanText, planSchema } from '../../src/core/plan/plan.js';
import { BUILTIN_PROFILES, executorProfiles, parseConfigText } from '../../src/core/settings/config.js';

// `lanes init`'s starter plan names every field of the plan's schema (the list comes from
// the zod schema, so a field added without its line in the starter fails here), and its
// commented-out fields, uncommented, make a valid plan too.

type Def = {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  element?: z.ZodType;
  in?: z.ZodType;
};
const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** Every field path of a schema: `budget.max_children`, `children[].acceptance[].run`, … */
function fieldPaths(schema: z.ZodType, prefix = ''): string[] {
  const def = defOf(schema);
  if (def.innerType) return fieldPaths(def.innerType, prefix); // optional, default
  if (def.type === 'pipe' && def.in) return fieldPaths(def.in, prefix);
  if (def.type === 'array' && def.element) return fieldPaths(def.element, `${prefix}[]`);
  if (def.type !== 'object' || !def.shape) return [];
  return Object.entries(def.shape).flatMap(([key, value]) => {
    const path = prefix ? `${prefix}.${key}` : key;
    return [path, ...fieldPaths(value, path)];
  });
}

/** Whether `path` is set somewhere in `value` (in any element of a list). */
function has(value: unknown, path: string[]): boolean {
  if (path.length === 0) return value !== undefined;
  const [head, ...rest] = path;
  const key = head!.replace(/\[\]$/, '');
  if (value === null || typeof value !== 'object' || !(key in value)) return false;
  const inner = (value as Record<string, unknown>)[key];
  if (!head!.endsWith('[]')) return has(inner, rest);
  return Array.isArray(inner) && inner.some((item) => has(item, rest));
}

/** The starter with its commented-out fields (`# key: …`, `#   - …`) made real. */
function uncommented(text: string): string {
  return text
    .split('\n')
    .map((line) => {
      const m = /^(\s*)# ?(.*)$/.exec(line);
      if (!m || !/^\s*([a-z_]+:(\s|$)|- )/.test(m[2]!)) return line;
      return m[1]! + m[2]!;
    })
    .join('\n');
}

describe('lanes init: the starter plan', () => {
  it('names every field of the plan schema', () => {
    const paths = fieldPaths(planSchema);
    // (the walk itself reads the schema: the nested fields are there)
    expect(paths).toContain('children[].acceptance[].timeout_ms');
    expect(paths).toContain('budget.qa_failure_limit');
    const full = YAML.parse(uncommented(STARTER_PLAN)) as unknown;
    const missing = paths.filter((p) => !has(full, p.split('.')));
    expect(missing).toEqual([]);
  });

  it('is a valid plan as written and with every field uncommented', () => {
    const plan = parsePlanText(STARTER_PLAN, 'plan.yaml', YAML);
    expect(plan.children.map((c) => c.executor ?? plan.executor)).toEqual(['script', 'claude']);
    expect(plan.children[0]!.run).toBeDefined();
    const full = parsePlanText(uncommented(STARTER_PLAN), 'plan.yaml', YAML);
    expect(full.final_checks).toHaveLength(1);
    expect(full.children[1]!.review).toBe('human');
  });
});

describe('lanes init --config', () => {
  it('spells out the built-in profiles and parses back to them', () => {
    const text = starterConfig();
    expect(Object.keys((JSON.parse(text) as { executors: object }).executors)).toEqual(
      Object.keys(BUILTIN_PROFILES),
    );
    expect(executorProfiles(parseConfigText(text, 'lanes.config.json'))).toEqual(BUILTIN_PROFILES);
  });
});
