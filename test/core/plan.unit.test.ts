import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { isLanesError } from '../../src/core/basics/errors.js';
import { DEFAULT_CHECK_TIMEOUT_MS, parsePlanText, planDigest } from '../../src/core/plan/plan.js';

// parsePlanText on sound plans: both formats give the same plan, with the defaults of
// DESIGN §2.1 filled in. (Unsound plans are in test/corpus/plans, see corpus.test.ts.)

const JSON_PLAN = JSON.stringify({
  batch: 'auth-rework',
  children: [
    {
      id: 'T1',
      goal: 'Add a login rate limiter',
      scope: ['./x', 'src/auth/**'],
      acceptance: [{ id: 'A1', run: ['npm', 'test'] }],
    },
    {
      id: 'T2',
      goal: 'Wire it in',
      blocked_by: ['T1'],
      scope: ['src/api/**'],
      acceptance: [{ id: 'A1', run: 'npm test', timeout_ms: 180000 }],
      executor: 'script',
      run: 'sh scripts/t2.sh',
      prompt: 'Keep the public API unchanged.',
      review: 'human',
    },
  ],
});

const YAML_PLAN = `# the same plan as JSON_PLAN
batch: auth-rework
children:
  - id: T1
    goal: Add a login rate limiter
    scope: ["./x", "src/auth/**"]
    acceptance:
      - id: A1
        run: [npm, test]
  - id: T2
    goal: Wire it in
    blocked_by: [T1]
    scope: [src/api/**]
    acceptance:
      - id: A1
        run: npm test
        timeout_ms: 180000
    executor: script
    run: sh scripts/t2.sh
    prompt: Keep the public API unchanged.
    review: human
`;

describe('parsePlanText', () => {
  it('reads a JSON plan and fills in the defaults', () => {
    const plan = parsePlanText(JSON_PLAN, 'plan.json');
    expect(plan.batch).toBe('auth-rework');
    expect(plan.base).toBe('HEAD');
    expect(plan.max_parallel).toBeUndefined();
    expect(plan.budget).toEqual({});
    const [t1, t2] = plan.children;
    expect(t1?.blocked_by).toEqual([]);
    expect(t1?.scope).toEqual(['x', 'src/auth/**']);
    expect(t1?.acceptance).toEqual([
      { id: 'A1', run: ['npm', 'test'], timeout_ms: DEFAULT_CHECK_TIMEOUT_MS },
    ]);
    expect(DEFAULT_CHECK_TIMEOUT_MS).toBe(600_000);
    expect(t1?.review).toBeUndefined();
    expect(t2).toMatchObject({
      blocked_by: ['T1'],
      acceptance: [{ id: 'A1', run: 'npm test', timeout_ms: 180_000 }],
      executor: 'script',
      run: 'sh scripts/t2.sh',
      review: 'human',
    });
  });

  it('reads the same plan from YAML, under .yaml and .yml', () => {
    const fromJson = parsePlanText(JSON_PLAN, 'plan.json');
    expect(parsePlanText(YAML_PLAN, 'plan.yaml', YAML)).toEqual(fromJson);
    expect(parsePlanText(YAML_PLAN, 'dir/PLAN.YML', YAML)).toEqual(fromJson);
  });

  it('keeps base, max_parallel and budget when given', () => {
    const plan = parsePlanText(
      YAML_PLAN.replace(
        'batch: auth-rework',
        'batch: b1\nbase: main\nmax_parallel: 3\nbudget: { max_children: 5, qa_failure_limit: 1 }',
      ),
      'plan.yaml',
      YAML,
    );
    expect(plan).toMatchObject({
      base: 'main',
      max_parallel: 3,
      budget: { max_children: 5, qa_failure_limit: 1 },
    });
  });

  it('normalizes "./" so the digest does not depend on it', () => {
    const dotted = parsePlanText(JSON_PLAN, 'plan.json');
    const plain = parsePlanText(JSON_PLAN.replace('"./x"', '"x"'), 'plan.json');
    expect(planDigest(dotted)).toBe(planDigest(plain));
    expect(planDigest(dotted)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('reports every problem at once, as a plan_invalid error with exit 2', () => {
    const text = JSON_PLAN.replace('"T1"', '"T 1"').replace('"src/api/**"', '"/src/api/**"');
    let caught: unknown;
    try {
      parsePlanText(text, 'plan.json');
    } catch (error) {
      caught = error;
    }
    expect(isLanesError(caught)).toBe(true);
    if (!isLanesError(caught)) return;
    expect(caught.code).toBe('plan_invalid');
    expect(caught.exitCode).toBe(2);
    expect(caught.message).toContain('plan plan.json is invalid:');
    expect(caught.message).toContain('children[0].id: must match');
    expect(caught.message).toContain(
      'children[1].scope[0]: must be relative, got "/src/api/**" (child "T2")',
    );
  });
});
