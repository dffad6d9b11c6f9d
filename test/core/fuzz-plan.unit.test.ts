import fc from 'fast-check';
import YAML from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { LanesError } from '../../src/core/basics/errors.js';
import { parsePlanText } from '../../src/core/plan/plan.js';
import type { Plan } from '../../src/core/plan/plan.js';
import { scopeMatcher, scopesOverlap } from '../../src/core/plan/scope.js';
import { computeWaves } from '../../src/core/plan/waves.js';
import { applyMutation, mutationArb, textCorruptionArb } from '../e2e/reliability/mutations.js';

// Fuzzing the plan parser (docs/RELIABILITY.md): random mutations of valid plans, as JSON
// and as YAML, and random corruptions of their text. The parser must either accept the
// plan or throw a LanesError with code plan_invalid (exit 2) — nothing else — and a plan it
// accepts must satisfy the rules of DESIGN §2.1, as re-stated independently below (and the
// scope matcher, overlap test and waves must work on it without throwing).

const RUNS = Number(process.env.LANES_FUZZ_RUNS ?? 1000);
const tally = { accepted: 0, refused: 0, runs: 0 };
afterAll(() => {
  console.log(
    `fuzz-plan: ${tally.runs} plans tried, ${tally.accepted} accepted, ${tally.refused} refused with plan_invalid`,
  );
});

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const BASES: Json[] = [
  {
    batch: 'auth-rework',
    base: 'main',
    max_parallel: 3,
    budget: { max_children: 4, qa_failure_limit: 2 },
    executor: 'script',
    children: [
      {
        id: 'T1',
        goal: 'Add a login rate limiter',
        blocked_by: [],
        scope: ['src/auth/**', 'test/auth/**'],
        acceptance: [{ id: 'A1', run: ['npm', 'test'], timeout_ms: 1000 }],
        run: 'sh scripts/t1.sh',
        model: 'opus',
        effort: 'high',
      },
      {
        id: 'T2',
        goal: 'Docs',
        blocked_by: ['T1'],
        scope: ['docs'],
        acceptance: [{ id: 'A1', run: 'test -f docs/x.md' }],
        prompt: 'Keep it short.',
        review: 'human',
        run: 'true',
      },
      {
        id: 'T3',
        goal: 'Both',
        blocked_by: ['T1', 'T2'],
        scope: ['./lib/*.ts'],
        acceptance: [
          { id: 'A1', run: ['true'] },
          { id: 'A2', run: ['test', '-d', 'lib'] },
        ],
        executor: 'claude',
      },
    ],
  },
  {
    batch: 'b',
    children: [{ id: 'x', goal: 'g', scope: ['a'], acceptance: [{ id: 'c', run: ['true'] }] }],
  },
];

const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const goodId = (v: unknown) =>
  typeof v === 'string' && ID.test(v) && !v.includes('..') && !v.endsWith('.') && !v.endsWith('.lock');
const positiveInt = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v > 0;
const text = (v: unknown) => typeof v === 'string' && v.trim() !== '' && !v.includes('\0');

/** A model is one argument that cannot read as a flag; an effort one of the known levels. */
function preferenceProblems(o: { model?: unknown; effort?: unknown }, at: string): string[] {
  const out: string[] = [];
  if (
    o.model !== undefined &&
    !(typeof o.model === 'string' && /^[A-Za-z0-9][A-Za-z0-9._:/@[\]+-]{0,127}$/.test(o.model))
  )
    out.push(`${at}: model`);
  if (
    o.effort !== undefined &&
    !['minimal', 'low', 'medium', 'high', 'xhigh', 'max'].includes(o.effort as string)
  )
    out.push(`${at}: effort`);
  return out;
}

/** DESIGN §2.1, re-stated without the code under test: every rule an accepted plan must meet. */
function planProblems(plan: Plan): string[] {
  const out: string[] = [];
  const known = (obj: object, keys: string[], at: string) => {
    for (const k of Object.keys(obj)) if (!keys.includes(k)) out.push(`${at}: unknown field ${k}`);
  };
  known(plan, ['batch', 'base', 'max_parallel', 'budget', 'executor', 'model', 'effort', 'children'], 'plan');
  out.push(...preferenceProblems(plan, 'plan'));
  if (!goodId(plan.batch)) out.push('batch id');
  if (!text(plan.base)) out.push('base');
  if (plan.max_parallel !== undefined && !positiveInt(plan.max_parallel)) out.push('max_parallel');
  known(plan.budget, ['max_children', 'qa_failure_limit'], 'budget');
  for (const v of Object.values(plan.budget)) if (v !== undefined && !positiveInt(v)) out.push('budget');
  if (plan.executor !== undefined && !goodId(plan.executor)) out.push('executor');
  if (!Array.isArray(plan.children) || plan.children.length === 0) return [...out, 'children empty'];
  const ids = plan.children.map((c) => c.id);
  if (new Set(ids).size !== ids.length) out.push('duplicate child ids');
  for (const c of plan.children) {
    const at = `child ${c.id}`;
    known(
      c,
      [
        'id',
        'goal',
        'blocked_by',
        'scope',
        'acceptance',
        'executor',
        'model',
        'effort',
        'run',
        'prompt',
        'review',
      ],
      at,
    );
    out.push(...preferenceProblems(c, at));
    if (!goodId(c.id)) out.push(`${at}: id`);
    if (!text(c.goal)) out.push(`${at}: goal`);
    if (new Set(c.blocked_by).size !== c.blocked_by.length) out.push(`${at}: blocked_by twice`);
    for (const d of c.blocked_by) if (d === c.id || !ids.includes(d)) out.push(`${at}: blocked_by ${d}`);
    if (c.scope.length === 0) out.push(`${at}: empty scope`);
    for (const s of c.scope) {
      const segments = s.split(/[\\/]/);
      if (s === '' || s.includes('\0') || s.startsWith('/') || /^[A-Za-z]:[\\/]/.test(s))
        out.push(`${at}: scope ${JSON.stringify(s)}`);
      if (segments.includes('..') || segments.includes('.')) out.push(`${at}: scope segment in ${s}`);
    }
    if (c.acceptance.length === 0) out.push(`${at}: empty acceptance`);
    const checkIds = c.acceptance.map((a) => a.id);
    if (new Set(checkIds).size !== checkIds.length) out.push(`${at}: duplicate check ids`);
    for (const a of c.acceptance) {
      known(a, ['id', 'run', 'timeout_ms'], `${at} check`);
      if (!goodId(a.id)) out.push(`${at}: check id`);
      if (!positiveInt(a.timeout_ms)) out.push(`${at}: timeout`);
      const ok =
        typeof a.run === 'string'
          ? text(a.run)
          : Array.isArray(a.run) &&
            a.run.length > 0 &&
            a.run[0] !== '' &&
            a.run.every((x) => typeof x === 'string' && !x.includes('\0'));
      if (!ok) out.push(`${at}: check run`);
    }
    if (c.executor !== undefined && !goodId(c.executor)) out.push(`${at}: executor`);
    if (c.run !== undefined && !text(c.run)) out.push(`${at}: run`);
    if (c.prompt !== undefined && (typeof c.prompt !== 'string' || c.prompt.includes('\0')))
      out.push(`${at}: prompt`);
    if (c.review !== undefined && c.review !== 'human') out.push(`${at}: review`);
  }
  // No cycle: Kahn's algorithm removes every child.
  const indegree = new Map(plan.children.map((c) => [c.id, c.blocked_by.length]));
  const queue = plan.children.filter((c) => c.blocked_by.length === 0).map((c) => c.id);
  let removed = 0;
  while (queue.length) {
    const id = queue.shift()!;
    removed++;
    for (const c of plan.children)
      if (c.blocked_by.includes(id)) {
        indegree.set(c.id, indegree.get(c.id)! - 1);
        if (indegree.get(c.id) === 0) queue.push(c.id);
      }
  }
  if (removed !== new Set(ids).size) out.push('dependency cycle');
  return out;
}

/** The parser's answer: the plan, or null for a typed refusal; anything else fails the test. */
function parseOrRefuse(textIn: string, source: string): Plan | null {
  tally.runs++;
  try {
    const plan = parsePlanText(textIn, source, YAML);
    tally.accepted++;
    return plan;
  } catch (error) {
    if (!(error instanceof LanesError)) throw new Error(`untyped error from ${source}: ${String(error)}`);
    expect(error.code).toBe('plan_invalid');
    expect(error.exitCode).toBe(2);
    tally.refused++;
    return null;
  }
}

function checkAccepted(plan: Plan | null): void {
  if (plan === null) return;
  expect(planProblems(plan)).toEqual([]);
  for (const c of plan.children) scopeMatcher(c.scope)('src/x.ts');
  for (const a of plan.children) for (const b of plan.children) scopesOverlap(a.scope, b.scope);
  computeWaves(plan.children, plan.max_parallel ?? 2);
}

const serialize = (value: Json, yaml: boolean) => (yaml ? YAML.stringify(value) : JSON.stringify(value));

describe('fuzzing the plan parser', () => {
  it('accepts every base plan (the fuzzer starts from sound input)', () => {
    for (const base of BASES) checkAccepted(parseOrRefuse(JSON.stringify(base), 'base.json'));
  });

  it('mutated plans: a typed refusal or a plan that keeps every rule', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...BASES),
        fc.array(mutationArb, { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        (base, mutations, yaml) => {
          let value = structuredClone(base);
          for (const m of mutations) value = applyMutation(value, m);
          checkAccepted(parseOrRefuse(serialize(value, yaml), yaml ? 'fuzz.yaml' : 'fuzz.json'));
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('corrupted plan text: a typed refusal or a plan that keeps every rule', () => {
    fc.assert(
      fc.property(fc.constantFrom(...BASES), fc.boolean(), textCorruptionArb, (base, yaml, corrupt) => {
        const source = yaml ? 'fuzz.yml' : 'fuzz.json';
        checkAccepted(parseOrRefuse(corrupt(serialize(base, yaml)), source));
      }),
      { numRuns: Math.ceil(RUNS / 3) },
    );
  });
});
