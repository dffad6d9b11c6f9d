import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { patternsOverlap, scopeMatcher, scopesOverlap } from '../../src/core/plan/scope.js';
import { computeWaves } from '../../src/core/plan/waves.js';

// computeWaves over random DAGs with scopes from a small vocabulary, and the overlap rule
// it relies on: conservative (never "disjoint" when one path is inside both scopes).

const VOCABULARY = [
  'src/a/**',
  'src/a/x.ts',
  'src/b/**',
  'docs/**',
  '**/*.md',
  'src/*',
  'test/a*',
  'test/b.ts',
  'src/a',
] as const;

interface Node {
  id: string;
  blocked_by: string[];
  scope: string[];
}

/** Children c0..cN-1, each blocked only by earlier ones (so acyclic), in shuffled order. */
const dagArb = fc
  .integer({ min: 1, max: 10 })
  .chain((n) =>
    fc.tuple(
      fc.tuple(
        ...Array.from({ length: n }, (_, i) =>
          fc.record({
            deps: fc.subarray(
              Array.from({ length: i }, (_, j) => `c${j}`),
              { maxLength: Math.min(3, i) },
            ),
            scope: fc.uniqueArray(fc.constantFrom(...VOCABULARY), { minLength: 1, maxLength: 3 }),
          }),
        ),
      ),
      fc.array(fc.nat(), { minLength: n, maxLength: n }),
    ),
  )
  .map(([specs, keys]) => {
    const nodes: Node[] = specs.map((s, i) => ({ id: `c${i}`, blocked_by: s.deps, scope: s.scope }));
    // Shuffle by sort keys: computeWaves must not rely on plan order being topological.
    return nodes
      .map((node, i) => ({ node, key: keys[i] ?? 0 }))
      .sort((x, y) => x.key - y.key)
      .map((x) => x.node);
  });

describe('computeWaves', () => {
  it('forms sound waves for any DAG and max_parallel', () => {
    fc.assert(
      fc.property(dagArb, fc.integer({ min: 1, max: 5 }), (children, maxParallel) => {
        const waves = computeWaves(children, maxParallel);

        const waveOf = new Map<string, number>();
        waves.forEach((wave, w) => {
          expect(wave.length).toBeGreaterThan(0);
          expect(wave.length).toBeLessThanOrEqual(maxParallel);
          for (const child of wave) {
            expect(waveOf.has(child.id), `${child.id} in two waves`).toBe(false);
            waveOf.set(child.id, w);
          }
          for (let i = 0; i < wave.length; i++)
            for (let j = i + 1; j < wave.length; j++) {
              const [x, y] = [wave[i]!, wave[j]!];
              expect(scopesOverlap(x.scope, y.scope), `${x.id} and ${y.id} share wave ${w}`).toBe(false);
            }
        });

        expect([...waveOf.keys()].sort()).toEqual(children.map((c) => c.id).sort());
        for (const child of children)
          for (const dep of child.blocked_by)
            expect(waveOf.get(child.id)!, `${child.id} runs with or before ${dep}`).toBeGreaterThan(
              waveOf.get(dep)!,
            );
      }),
      { numRuns: 300 },
    );
  });
});

// Patterns and paths over one small alphabet, so that shared paths are easy to find.
const LITERAL_SEGMENTS = ['src', 'a', 'ab', 'b', 'x.ts', '.env'] as const;
const GLOB_SEGMENTS = ['*', '**', 'a*', '*.ts', '?b', '[ab]', '{a,b}', '@(a|ab)', '+(a)', 'a?'] as const;
const PATH_SEGMENTS = ['src', 'a', 'ab', 'b', 'x.ts', '.env', 'c'] as const;

const patternArb = fc
  .array(fc.oneof(fc.constantFrom(...LITERAL_SEGMENTS), fc.constantFrom(...GLOB_SEGMENTS)), {
    minLength: 1,
    maxLength: 3,
  })
  .map((segments) => segments.join('/'));

/** Every path of 1..3 segments over PATH_SEGMENTS (7 + 49 + 343). */
const ALL_PATHS: string[] = (() => {
  const out: string[] = [];
  let layer: string[] = [''];
  for (let depth = 1; depth <= 3; depth++) {
    layer = layer.flatMap((prefix) => PATH_SEGMENTS.map((s) => (prefix ? `${prefix}/${s}` : s)));
    out.push(...layer);
  }
  return out;
})();

describe('patternsOverlap', () => {
  it('is symmetric', () => {
    fc.assert(
      fc.property(patternArb, patternArb, (a, b) => {
        expect(patternsOverlap(a, b)).toBe(patternsOverlap(b, a));
      }),
      { numRuns: 300 },
    );
  });

  it('never calls two scopes disjoint when a path is inside both', () => {
    fc.assert(
      fc.property(patternArb, patternArb, (a, b) => {
        const inA = scopeMatcher([a]);
        const inB = scopeMatcher([b]);
        const shared = ALL_PATHS.find((p) => inA(p) && inB(p));
        if (shared !== undefined) expect(patternsOverlap(a, b), `both contain "${shared}"`).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
