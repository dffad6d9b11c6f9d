import type YAMLModule from 'yaml';
import { z } from 'zod';
import { canonicalJson, sha256Hex } from '../basics/canonical-json.js';
import { badInput, LanesError } from '../basics/errors.js';
import { idSchema, machineNameSchema } from '../basics/ids.js';
import { describeIssue, formatPath } from '../basics/issues.js';
import { effortSchema, modelSchema } from './preference-values.js';
import { normalizeScopeEntry, scopeEntryProblem } from './scope.js';

// The plan (DESIGN §2.1): parsed with zod, then checked for the rules a schema cannot say
// (references, cycles). Every problem is reported, one line each, naming the field.

export const DEFAULT_CHECK_TIMEOUT_MS = 600_000;
export const DEFAULT_QA_FAILURE_LIMIT = 3;
export const DEFAULT_MAX_PARALLEL = 2;

const noNul = (s: string) => !s.includes('\0');
const positiveInt = z
  .number()
  .int({ message: 'must be a whole number' })
  .positive({ message: 'must be > 0' });

const argvSchema = z
  .array(z.string().refine(noNul, { message: 'must not contain a NUL byte' }))
  .min(1, { message: 'argv must not be empty' })
  .refine((argv) => argv[0] !== '', { message: 'argv[0] (the program) must not be empty' });

const commandSchema = z.union([
  z.string().trim().min(1, { message: 'command must not be empty' }).refine(noNul, {
    message: 'must not contain a NUL byte',
  }),
  argvSchema,
]);

const checkSchema = z.strictObject({
  id: idSchema,
  run: commandSchema,
  timeout_ms: positiveInt.default(DEFAULT_CHECK_TIMEOUT_MS),
});

const scopeEntrySchema = z
  .string()
  .superRefine((entry, ctx) => {
    const problem = scopeEntryProblem(entry);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .transform(normalizeScopeEntry);

const childSchema = z.strictObject({
  id: idSchema,
  goal: z
    .string()
    .trim()
    .min(1, { message: 'must not be empty' })
    .refine(noNul, { message: 'must not contain a NUL byte' }),
  blocked_by: z.array(idSchema).default([]),
  scope: z.array(scopeEntrySchema).min(1),
  acceptance: z.array(checkSchema).min(1),
  executor: idSchema.optional(),
  // Executor preferences (src/core/preferences.ts); not part of the digest.
  model: modelSchema.optional(),
  effort: effortSchema.optional(),
  run: z.string().trim().min(1).refine(noNul, { message: 'must not contain a NUL byte' }).optional(),
  prompt: z.string().refine(noNul, { message: 'must not contain a NUL byte' }).optional(),
  review: z.literal('human', { message: 'must be "human" (or left out)' }).optional(),
  /** The machine the child runs on (a name of the config's `machines`); not part of the digest. */
  machine: machineNameSchema.optional(),
});

export const planSchema = z.strictObject({
  batch: idSchema,
  base: z.string().trim().min(1).refine(noNul, { message: 'must not contain a NUL byte' }).default('HEAD'),
  max_parallel: positiveInt.optional(),
  budget: z
    .strictObject({
      max_children: positiveInt.optional(),
      qa_failure_limit: positiveInt.optional(),
      /** Tokens the agents may report spent before no new lane starts (budget_stopped). */
      max_tokens: positiveInt.optional(),
    })
    .default({}),
  executor: idSchema.optional(),
  model: modelSchema.optional(),
  effort: effortSchema.optional(),
  children: z.array(childSchema).min(1),
  /** Checks of the whole batch, run on the batch tip once every child is integrated (docs/DECISIONS.md). */
  final_checks: z.array(checkSchema).min(1).optional(),
});

export type Plan = z.output<typeof planSchema>;
export type PlanChild = Plan['children'][number];
export type AcceptanceCheck = PlanChild['acceptance'][number];
/** The shape of one check (acceptance, final_checks, the config's final_checks). */
export const acceptanceCheckSchema = checkSchema;

/**
 * What the core needs of a YAML parser: the `yaml` package's `parseDocument`. The caller
 * passes it in (src/store/plan-file.ts loads it only for a YAML plan): loading it is a
 * fifth of `plan check`'s start-up time, and a JSON plan never needs it.
 */
export type YamlParser = Pick<typeof YAMLModule, 'parseDocument'>;

/** Parses plan text; `source` names the file in messages and picks JSON or YAML. */
export function parsePlanText(text: string, source: `${string}.json`): Plan;
/** A source that may be YAML needs the parser (null: the text is known to be JSON). */
export function parsePlanText(text: string, source: string, yaml: YamlParser | null): Plan;
export function parsePlanText(text: string, source: string, yaml: YamlParser | null = null): Plan {
  const raw = decodePlan(text, source, yaml);
  // reportInput: the messages say what was found ("expected string, got number"), and
  // without it zod leaves `input` out, so every wrong type would read as "required".
  const parsed = planSchema.safeParse(raw, { reportInput: true });
  // (the problems of ids and references are said with the schema's, not after they are mended)
  if (!parsed.success) {
    // (a cycle too: a plan with a bad field and a cycle is told both at once)
    const loose = looseChildren(raw);
    const cycles = cycleProblems(loose as Plan);
    throw planError(source, [...planIssueLines(parsed.error, raw), ...referenceProblems(loose), ...cycles]);
  }
  const problems = [...referenceProblems(parsed.data), ...cycleProblems(parsed.data)];
  if (problems.length > 0) throw planError(source, problems);
  return parsed.data;
}

function planError(source: string, problems: string[]): LanesError {
  const lines = problems.map((p) => `  ${p}`).join('\n');
  return badInput('plan_invalid', `plan ${source} is invalid:\n${lines}`);
}

/** One line per zod issue, naming the field and, inside `children[i]`, the child's id. */
function planIssueLines(error: z.ZodError, raw: unknown): string[] {
  return error.issues.map((issue) => {
    let what = describeIssue(issue);
    if (typeof issue.input === 'number') {
      // "expected int, got number 1.5" and "must be > 0" do not show the value read.
      if (issue.code === 'invalid_type' && String(issue.expected) === 'int')
        what = `must be a whole number, got ${issue.input}`;
      else if (issue.code === 'too_small') what = `${what}, got ${issue.input}`;
    }
    // Only `run` is a union (string or argv); zod's own word for it is "Invalid input".
    if (issue.code === 'invalid_union') what = 'must be a command string or an argv list of strings';
    // A bad id ("must match ^…$") is easier to fix when the message quotes it.
    const input = issue.input;
    if (
      typeof input === 'string' &&
      input !== '' &&
      (issue.code === 'invalid_format' || issue.code === 'custom')
    )
      if (!what.includes(', got ')) what = `${what}, got ${JSON.stringify(input.slice(0, 200))}`;
    return `${formatPath(issue.path) || '(top level)'}: ${what}${childNote(issue.path, raw)}`;
  });
}

function childNote(path: ReadonlyArray<PropertyKey>, raw: unknown): string {
  if (path[0] !== 'children' || typeof path[1] !== 'number') return '';
  if (path.length === 3 && path[2] === 'id') return ''; // the message quotes the id already
  const children = raw !== null && typeof raw === 'object' ? (raw as { children?: unknown }).children : [];
  const child = Array.isArray(children) ? (children[path[1]] as unknown) : undefined;
  const id = child !== null && typeof child === 'object' ? (child as { id?: unknown }).id : undefined;
  return typeof id === 'string' && id !== '' ? ` (child ${JSON.stringify(id)})` : '';
}

/** The file name's extension, as node's `extname` gives it ('' for none and for dot files). */
function extensionOf(source: string): string {
  const name = source.slice(source.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  return dot <= 0 || name === '..' ? '' : name.slice(dot);
}

function decodePlan(text: string, source: string, yaml: YamlParser | null): unknown {
  const ext = extensionOf(source).toLowerCase();
  if (ext !== '.json' && ext !== '.yaml' && ext !== '.yml')
    throw badInput('plan_invalid', `plan ${source}: unknown file type "${ext}" (use .json, .yaml or .yml)`);
  if (text.trim() === '') throw planError(source, ['the file is empty']);
  if (ext === '.json') {
    try {
      return JSON.parse(text);
    } catch (error) {
      throw planError(source, [`not valid JSON: ${(error as Error).message}`]);
    }
  }
  if (!yaml) throw new Error(`parsePlanText(${source}): a YAML plan needs the YAML parser passed in`);
  const doc = yaml.parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  if (doc.errors.length > 0) {
    throw planError(
      source,
      doc.errors.map((e) => `not valid YAML: ${(e.message.split('\n')[0] ?? e.message).replace(/:$/, '')}`),
    );
  }
  if (doc.contents === null) throw planError(source, ['the file is empty (only comments)']);
  try {
    return doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    // e.g. an alias bomb: "Excessive alias count indicates a resource exhaustion attack"
    throw planError(source, [`not valid YAML: ${(error as Error).message}`]);
  }
}

const UNREAD = '\0';

/** What a plan that failed its schema says of ids and references, read as far as it can be. */
function looseChildren(raw: unknown): Pick<Plan, 'children' | 'final_checks'> {
  const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
  const field = (value: unknown, key: string): unknown =>
    value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
  const str = (value: unknown): string => (typeof value === 'string' ? value : UNREAD);
  const children = list(field(raw, 'children')).map((c) => ({
    id: str(field(c, 'id')),
    blocked_by: list(field(c, 'blocked_by')).filter((d): d is string => typeof d === 'string'),
    acceptance: list(field(c, 'acceptance')).map((a) => ({ id: str(field(a, 'id')) })),
  }));
  return { children: children as unknown as Plan['children'] };
}

function referenceProblems(plan: Pick<Plan, 'children' | 'final_checks'>): string[] {
  const problems: string[] = [];
  const firstIndex = new Map<string, number>();
  plan.children.forEach((child, i) => {
    const seen = firstIndex.get(child.id);
    if (child.id === UNREAD) return; // (an id the schema refused: said there)
    if (seen !== undefined)
      problems.push(`children[${i}].id: duplicate child id "${child.id}" (also children[${seen}])`);
    else firstIndex.set(child.id, i);
  });
  plan.children.forEach((child, i) => {
    const deps = new Set<string>();
    child.blocked_by.forEach((dep, j) => {
      const at = `children[${i}].blocked_by`;
      if (dep === child.id) problems.push(`${at}: child "${child.id}" cannot be blocked by itself`);
      else if (!firstIndex.has(dep)) problems.push(`${at}: unknown child "${dep}" (in child "${child.id}")`);
      else if (deps.has(dep)) problems.push(`${at}[${j}]: "${dep}" is listed twice (in child "${child.id}")`);
      deps.add(dep);
    });
    const checkIds = new Set<string>();
    child.acceptance.forEach((check, j) => {
      if (checkIds.has(check.id) && check.id !== UNREAD)
        problems.push(
          `children[${i}].acceptance[${j}].id: duplicate check id "${check.id}" in child "${child.id}"`,
        );
      checkIds.add(check.id);
    });
  });
  const finalIds = new Set<string>();
  (plan.final_checks ?? []).forEach((check, j) => {
    if (finalIds.has(check.id)) problems.push(`final_checks[${j}].id: duplicate check id "${check.id}"`);
    finalIds.add(check.id);
  });
  return problems;
}

/** Finds one dependency cycle (if any) and names it: `dependency cycle: T1 -> T3 -> T1`. */
function cycleProblems(plan: Plan): string[] {
  const deps = new Map(plan.children.map((c) => [c.id, c.blocked_by.filter((d) => d !== c.id)]));
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const visit = (id: string): string[] | null => {
    state.set(id, 'visiting');
    stack.push(id);
    for (const dep of deps.get(id) ?? []) {
      if (!deps.has(dep)) continue;
      const s = state.get(dep);
      if (s === 'visiting') return [...stack.slice(stack.indexOf(dep)), dep];
      if (s === undefined) {
        const found = visit(dep);
        if (found) return found;
      }
    }
    stack.pop();
    state.set(id, 'done');
    return null;
  };
  for (const child of plan.children) {
    if (state.has(child.id)) continue;
    const cycle = visit(child.id);
    // The walk follows blocked_by edges; print the cycle in "runs before" order.
    if (cycle) return [`dependency cycle: ${cycle.reverse().join(' -> ')}`];
  }
  return [];
}

const checkContract = (a: AcceptanceCheck) => ({ id: a.id, run: a.run, timeout_ms: a.timeout_ms });

/**
 * sha256 of the canonical JSON of the children's contract fields, in plan order. A plan
 * with `final_checks` hashes `{children, final_checks}` instead, so the digest of every
 * plan without them stays what it was.
 */
export function planDigest(plan: Plan): string {
  const children = plan.children.map((c) => ({
    id: c.id,
    goal: c.goal,
    blocked_by: c.blocked_by,
    scope: c.scope,
    acceptance: c.acceptance.map(checkContract),
  }));
  if (plan.final_checks === undefined) return sha256Hex(canonicalJson(children));
  return sha256Hex(canonicalJson({ children, final_checks: plan.final_checks.map(checkContract) }));
}
