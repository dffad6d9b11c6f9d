import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import { parsePlanText } from '../../src/core/plan/plan.js';
import { planAdvice } from '../../src/core/plan/plan-advice.js';

// The plan advice of `lanes plan draft` (issue 27): a check naming a file no child creates,
// scopes that keep everything apart from nothing, a child without a check that can fail.
// And `plan check` says a cycle together with a bad field.

const plan = (children: string) =>
  parsePlanText(`batch: b\nexecutor: script\nchildren:\n${children}`, 'p.yaml', YAML);
const child = (id: string, scope: string, run: string, extra = '') =>
  `  - { id: ${id}, goal: g, scope: ['${scope}'], acceptance: [{ id: c, run: '${run}' }]${extra} }\n`;

describe('plan advice', () => {
  it('passes a plan whose checks can fail, name made files, and whose scopes are apart', () => {
    const p = plan(child('a', 'a.txt', 'grep -q x a.txt') + child('b', 'src/**', 'test -f src/b.ts'));
    expect(planAdvice(p, () => false)).toEqual([]);
  });

  it('names each problem', () => {
    const p = plan(child('a', 'x/**', 'true') + child('b', 'x/**', 'grep -q y docs/none.md'));
    const advice = planAdvice(p, (path) => path === 'README.md');
    expect(advice).toEqual([
      'children[0].acceptance: no check of child "a" can fail (each passes whatever the lane holds)',
      `children[1].acceptance[0]: check "c" of child "b" names docs/none.md, which is not in the repository and no child's scope creates it`,
      expect.stringMatching(/^scope: every two children overlap in scope .* nothing runs side by side/),
    ]);
    // A file the repository has is fine.
    expect(planAdvice(plan(child('a', 'a.txt', 'grep -q y README.md')), (p) => p === 'README.md')).toEqual(
      [],
    );
  });

  it('plan check tells a cycle together with an unknown field', () => {
    const text =
      child('a', 'a', 'grep a a', ', blocked_by: [b], colour: red') +
      child('b', 'b', 'grep b b', ', blocked_by: [a]');
    expect(() => plan(text)).toThrow(/colour[\s\S]*dependency cycle: /);
  });
});
