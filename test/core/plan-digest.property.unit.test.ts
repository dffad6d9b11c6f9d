import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { DEFAULT_CHECK_TIMEOUT_MS, parsePlanText, planDigest } from '../../src/core/plan/plan.js';

// plan_digest (DESIGN §2.1) is a function of the children's contract fields only: not of key
// order, file format or layout, nor of the fields outside the contract.

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Obj = { [key: string]: Json };

const idArb = fc
  .stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,8}$/)
  .filter((id) => !id.includes('..') && !id.endsWith('.') && !id.endsWith('.lock'));

/** Non-empty once trimmed, no NUL: what the plan accepts for goals and commands. */
const textArb = fc
  .string({
    minLength: 1,
    maxLength: 16,
    unit: fc.oneof(fc.constant('grapheme-ascii'), fc.constant('grapheme')),
  })
  .filter((s) => s.trim() !== '' && !s.includes('\0'));
const wordArb = fc.stringMatching(/^[A-Za-z0-9 _.:-]{0,8}$/);

const scopeSegment = fc.constantFrom('src', 'test', 'docs', 'a', 'b.ts', '**', '*.md', 'x*', '.github');
const scopeEntryArb = fc
  .tuple(fc.boolean(), fc.array(scopeSegment, { minLength: 1, maxLength: 3 }))
  .map(([dot, segments]) => (dot ? './' : '') + segments.join('/'));

const commandArb: fc.Arbitrary<Json> = fc.oneof(
  textArb,
  fc.tuple(textArb, fc.array(wordArb, { maxLength: 3 })).map(([prog, args]) => [prog, ...args]),
);

const checkArb = (id: string): fc.Arbitrary<Obj> =>
  fc.record(
    { id: fc.constant(id), run: commandArb, timeout_ms: fc.integer({ min: 1, max: 10_000_000 }) },
    { requiredKeys: ['id', 'run'] },
  );

const childArb = (id: string, earlier: string[]): fc.Arbitrary<Obj> =>
  fc
    .tuple(
      textArb,
      fc.subarray(earlier, { maxLength: Math.min(3, earlier.length) }),
      fc.array(scopeEntryArb, { minLength: 1, maxLength: 3 }),
      fc.uniqueArray(idArb, { minLength: 1, maxLength: 3 }).chain((ids) => fc.tuple(...ids.map(checkArb))),
      fc.record(
        { executor: idArb, run: textArb, prompt: fc.string(), review: fc.constant('human') },
        { requiredKeys: [] },
      ),
      fc.boolean(),
    )
    .map(([goal, blockedBy, scope, acceptance, extra, omitEmptyDeps]) => {
      const child: Obj = { id, goal, scope, acceptance, ...extra };
      if (blockedBy.length > 0 || !omitEmptyDeps) child.blocked_by = blockedBy;
      return child;
    });

/** A valid plan as plain data: unique ids, blocked_by naming earlier children only. */
const planArb: fc.Arbitrary<Obj> = fc.uniqueArray(idArb, { minLength: 1, maxLength: 5 }).chain((ids) =>
  fc
    .tuple(
      idArb,
      fc.tuple(...ids.map((id, i) => childArb(id, ids.slice(0, i)))),
      fc.record(
        {
          base: fc.constantFrom('main', 'HEAD', 'v1.0'),
          max_parallel: fc.integer({ min: 1, max: 8 }),
          budget: fc.record(
            {
              max_children: fc.integer({ min: 1, max: 50 }),
              qa_failure_limit: fc.integer({ min: 1, max: 9 }),
            },
            { requiredKeys: [] },
          ),
          executor: idArb,
        },
        { requiredKeys: [] },
      ),
    )
    .map(([batch, children, extra]): Obj => ({ batch, ...extra, children })),
);

/** mulberry32: a small seeded generator, so that a failing shuffle replays from its seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The same value with object keys in a random order at every depth (arrays keep theirs). */
function shuffleKeys(value: Json, next: () => number): Json {
  if (Array.isArray(value)) return value.map((v) => shuffleKeys(v, next));
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value);
  for (let i = keys.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [keys[i], keys[j]] = [keys[j]!, keys[i]!];
  }
  return Object.fromEntries(keys.map((k) => [k, shuffleKeys(value[k]!, next)]));
}

const digestOf = (plan: Obj) => planDigest(parsePlanText(JSON.stringify(plan), 'plan.json'));
const children = (plan: Obj) => plan.children as Obj[];
const NUM_RUNS = 200;

describe('plan_digest', () => {
  it('does not depend on key order, format or layout', () => {
    fc.assert(
      fc.property(
        planArb,
        fc.integer(),
        fc.constantFrom(0, 2, '\t'),
        fc.constantFrom(2, 4),
        fc.constantFrom('plan.yaml', 'plan.yml'),
        (plan, seed, jsonIndent, yamlIndent, yamlName) => {
          const expected = digestOf(plan);
          const next = random(seed);
          const json = JSON.stringify(shuffleKeys(plan, next), null, jsonIndent);
          expect(planDigest(parsePlanText(json, 'plan.json'))).toBe(expected);
          const yaml = YAML.stringify(shuffleKeys(plan, next), { indent: yamlIndent });
          expect(planDigest(parsePlanText(yaml, yamlName, YAML))).toBe(expected);
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });

  it('changes with any child contract field', () => {
    const changeArb = fc.constantFrom(
      'goal',
      'scope-add',
      'scope-replace',
      'check-add',
      'check-run',
      'check-timeout',
      'check-id',
      'blocked_by',
    );
    fc.assert(
      fc.property(planArb, fc.nat(), changeArb, (plan, pick, change) => {
        const before = digestOf(plan);
        const changed = structuredClone(plan);
        const list = children(changed);
        const index = pick % list.length;
        const child = list[index]!;
        const scope = child.scope as string[];
        const checks = child.acceptance as Obj[];
        const check = checks[pick % checks.length]!;
        const deps = (child.blocked_by ?? []) as string[];
        switch (change) {
          case 'goal':
            child.goal = `${String(child.goal).trim()} (changed)`;
            break;
          case 'scope-add':
            child.scope = [...scope, 'changed/**'];
            break;
          case 'scope-replace':
            child.scope = ['changed/**', ...scope.slice(1)];
            break;
          case 'check-add':
            child.acceptance = [...checks, { id: 'added-check', run: ['true'] }];
            if (checks.some((c) => c.id === 'added-check')) return;
            break;
          case 'check-run':
            check.run = ['changed-program', ...(Array.isArray(check.run) ? check.run : [])];
            break;
          case 'check-timeout':
            check.timeout_ms = ((check.timeout_ms as number | undefined) ?? DEFAULT_CHECK_TIMEOUT_MS) + 1;
            break;
          case 'check-id':
            if (checks.some((c) => c.id === 'renamed-check')) return;
            check.id = 'renamed-check';
            break;
          case 'blocked_by': {
            // Drop a dependency if there is one, else add an earlier child (if any).
            const earlier = list.slice(0, index).map((c) => c.id as string);
            if (deps.length > 0) child.blocked_by = deps.slice(1);
            else if (earlier.length > 0) child.blocked_by = [earlier[0]!];
            else return;
            break;
          }
        }
        expect(digestOf(changed)).not.toBe(before);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('does not change with fields outside the contract', () => {
    const changeArb = fc.constantFrom(
      'prompt',
      'child-executor',
      'child-run',
      'review',
      'executor',
      'max_parallel',
      'budget',
      'base',
      'batch',
      'scope-dot-slash',
      'default-timeout',
      'empty-blocked_by',
    );
    fc.assert(
      fc.property(planArb, fc.nat(), changeArb, (plan, pick, change) => {
        const before = digestOf(plan);
        const changed = structuredClone(plan);
        const list = children(changed);
        const child = list[pick % list.length]!;
        switch (change) {
          case 'prompt':
            child.prompt = `${String(child.prompt ?? '')} and keep the API`;
            break;
          case 'child-executor':
            child.executor = child.executor === 'codex' ? 'claude' : 'codex';
            break;
          case 'child-run':
            child.run = `${String(child.run ?? 'sh')} scripts/other.sh`;
            break;
          case 'review':
            if (child.review) delete child.review;
            else child.review = 'human';
            break;
          case 'executor':
            changed.executor = changed.executor === 'aider' ? 'script' : 'aider';
            break;
          case 'max_parallel':
            changed.max_parallel = ((changed.max_parallel as number | undefined) ?? 2) + 1;
            break;
          case 'budget':
            changed.budget = { max_children: 99, qa_failure_limit: 7 };
            break;
          case 'base':
            changed.base = changed.base === 'develop' ? 'main' : 'develop';
            break;
          case 'batch':
            changed.batch = `${String(changed.batch)}-2`;
            break;
          case 'scope-dot-slash':
            // "./src/**" and "src/**" name the same paths.
            child.scope = (child.scope as string[]).map((s) => (s.startsWith('./') ? s.slice(2) : `./${s}`));
            break;
          case 'default-timeout':
            for (const check of child.acceptance as Obj[])
              if (check.timeout_ms === undefined) check.timeout_ms = DEFAULT_CHECK_TIMEOUT_MS;
            break;
          case 'empty-blocked_by':
            if ((child.blocked_by as string[] | undefined)?.length) return;
            if (child.blocked_by) delete child.blocked_by;
            else child.blocked_by = [];
            break;
        }
        expect(digestOf(changed)).toBe(before);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
