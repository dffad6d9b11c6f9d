import { describe, expect, it } from 'vitest';
import { patternsOverlap, scopeMatcher, scopesOverlap } from '../../src/core/plan/scope.js';

// The overlap rule: two scopes overlap unless their literal prefixes (before the first glob
// character) diverge on a path segment; a scope that starts with a glob overlaps everything.

describe('patternsOverlap', () => {
  const cases: [string, string, boolean][] = [
    // diverging literal directories
    ['src/auth/**', 'src/billing/**', false],
    ['src/auth/**', 'test/auth/**', false],
    ['src/a/**', 'src/b/x.ts', false],
    // a partial segment that can still reach the other's directory
    ['src/auth/**', 'src/au*', true],
    ['src/auth/**', 'src/*', true],
    ['src/a*', 'src/ab*', true],
    ['test/a*', 'test/abc/x.ts', true],
    // a partial segment that cannot
    ['src/ab*', 'src/auth/**', false],
    ['src/ab*', 'src/ac*', false],
    ['test/a*', 'test/b.ts', false],
    // a leading glob overlaps everything
    ['**/*.ts', 'src/auth/x.ts', true],
    ['**/*.ts', 'docs/**', true],
    ['**/*.md', 'anything', true],
    ['*', 'src/a.ts', true],
    ['{src,lib}/x.ts', 'docs/y.md', true],
    // plain files and directories
    ['src/a.ts', 'src/b.ts', false],
    ['src/a.ts', 'src/a.ts', true],
    ['src/a', 'src/a/b.ts', true],
    ['src', 'src/deep/x.ts', true],
    ['src/a/', 'src/a/b.ts', true],
    ['src/a', 'src/ab', false],
    ['src/a', 'src/a*', true],
    ['src/a/**', 'src/a', true],
    // extglobs are globs: their literal prefix stops before "@(" / "+("
    ['src/@(a|b)/**', 'src/a/**', true],
    ['src/+(a)/x', 'src/a/x', true],
    ['src/@(a|b)/**', 'test/a/**', false],
  ];

  it.each(cases)('%s vs %s -> %s', (a, b, expected) => {
    expect(patternsOverlap(a, b)).toBe(expected);
    expect(patternsOverlap(b, a)).toBe(expected);
  });

  it('scopesOverlap is true when any pair of entries overlaps', () => {
    expect(scopesOverlap(['src/a/**', 'docs/a.md'], ['src/b/**', 'docs/**'])).toBe(true);
    expect(scopesOverlap(['src/a/**', 'docs/a.md'], ['src/b/**', 'test/**'])).toBe(false);
  });
});

describe('scopeMatcher', () => {
  it('treats a plain entry as a file or a whole directory', () => {
    const inAuth = scopeMatcher(['src/auth']);
    expect(inAuth('src/auth')).toBe(true);
    expect(inAuth('src/auth/x.ts')).toBe(true);
    expect(inAuth('src/auth/deep/y.ts')).toBe(true);
    expect(inAuth('src/authz/x.ts')).toBe(false);
    expect(inAuth('src/billing/x.ts')).toBe(false);
    expect(scopeMatcher(['src/auth/'])('src/auth/x.ts')).toBe(true);
  });

  it('matches dotfiles with **', () => {
    expect(scopeMatcher(['**'])('.env')).toBe(true);
    expect(scopeMatcher(['**'])('.github/workflows/ci.yml')).toBe(true);
    expect(scopeMatcher(['src/**'])('src/.hidden/x.ts')).toBe(true);
    expect(scopeMatcher(['**/*.md'])('.changeset/a.md')).toBe(true);
  });

  it('uses globs as globs', () => {
    const m = scopeMatcher(['src/*.ts', 'test/a*']);
    expect(m('src/x.ts')).toBe(true);
    expect(m('src/deep/x.ts')).toBe(false);
    expect(m('test/abc.ts')).toBe(true);
    expect(m('test/b.ts')).toBe(false);
  });

  it('matches when any entry matches', () => {
    const m = scopeMatcher(['src/a/**', 'docs/x.md']);
    expect(m('src/a/y.ts')).toBe(true);
    expect(m('docs/x.md')).toBe(true);
    expect(m('docs/y.md')).toBe(false);
  });
});
