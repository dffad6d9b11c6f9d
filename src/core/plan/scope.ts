import picomatch from 'picomatch';

// A scope is a list of globs, relative to the repository root, naming every path a child
// may change. Two rules live here: whether a path is inside a scope (picomatch), and
// whether two scopes may touch the same path (a conservative, literal-prefix test).

const GLOB_CHARS = new Set(['*', '?', '[', ']', '{', '}', '(', ')', '!', '\\']);

/** Problems with one scope entry, or null when it is acceptable. */
export function scopeEntryProblem(entry: string): string | null {
  if (entry.length === 0) return 'must not be empty';
  if (entry.includes('\0')) return 'must not contain a NUL byte';
  if (entry.startsWith('/') || /^[A-Za-z]:[\\/]/.test(entry)) return `must be relative, got "${entry}"`;
  if (entry.split(/[\\/]/).includes('..')) return `must not contain "..", got "${entry}"`;
  // "./" would name nothing a matcher accepts, and "." everything while overlapping nothing.
  const rest = normalizeScopeEntry(entry);
  if (rest === '' || rest.split(/[\\/]/).includes('.'))
    return `must name a path below the repository root, without "." segments ("**" is everything), got "${entry}"`;
  return null;
}

/** Strips a leading "./" so "./src/**" and "src/**" mean the same. */
export function normalizeScopeEntry(entry: string): string {
  let out = entry;
  while (out.startsWith('./')) out = out.slice(2);
  return out;
}

/**
 * The literal part of a glob before its first glob character, split on "/":
 * `complete` segments are whole path segments; `partial` is the start of the next one.
 */
function literalPrefix(pattern: string): { complete: string[]; partial: string | null; isGlob: boolean } {
  let cut = pattern.length;
  for (let i = 0; i < pattern.length; i++) {
    // "@(" and "+(" open picomatch extglobs; elsewhere "@" and "+" are literal.
    const extglob = (pattern[i] === '@' || pattern[i] === '+') && pattern[i + 1] === '(';
    if (GLOB_CHARS.has(pattern[i] as string) || extglob) {
      cut = i;
      break;
    }
  }
  const isGlob = cut < pattern.length;
  const literal = pattern.slice(0, cut);
  const parts = literal.split('/');
  const partial = parts.pop() as string;
  if (!isGlob) return { complete: [...parts, partial].filter((p) => p !== ''), partial: null, isGlob };
  return { complete: parts.filter((p) => p !== ''), partial, isGlob };
}

interface PrefixSegments {
  /** The literal segments, the last one a partial segment when `partial`. */
  segments: string[];
  partial: boolean;
}

// Wave planning compares every pair of scopes (125,000 pairs for 500 children): each
// pattern's prefix is worked out once, not once per pair.
const prefixCache = new Map<string, PrefixSegments>();

function prefixSegments(pattern: string): PrefixSegments {
  let cached = prefixCache.get(pattern);
  if (cached === undefined) {
    const p = literalPrefix(pattern);
    cached = {
      segments: p.partial === null ? p.complete : [...p.complete, p.partial],
      partial: p.partial !== null,
    };
    if (prefixCache.size > 10_000) prefixCache.clear();
    prefixCache.set(pattern, cached);
  }
  return cached;
}

/**
 * Two patterns overlap unless their literal prefixes diverge on a path segment.
 * A pattern that starts with a glob character overlaps everything.
 */
export function patternsOverlap(a: string, b: string): boolean {
  const pa = prefixSegments(a);
  const pb = prefixSegments(b);
  const segA = pa.segments;
  const segB = pb.segments;
  const n = Math.min(segA.length, segB.length);
  for (let i = 0; i < n; i++) {
    const x = segA[i] as string;
    const y = segB[i] as string;
    const xPartial = pa.partial && i === segA.length - 1;
    const yPartial = pb.partial && i === segB.length - 1;
    if (xPartial && yPartial) {
      if (!x.startsWith(y) && !y.startsWith(x)) return false;
    } else if (xPartial) {
      if (!y.startsWith(x)) return false;
    } else if (yPartial) {
      if (!x.startsWith(y)) return false;
    } else if (x !== y) {
      return false;
    }
  }
  // One literal ends where the other goes on: they share a path prefix, and a plain
  // entry also names everything below it (see scopeMatcher).
  return true;
}

export function scopesOverlap(a: readonly string[], b: readonly string[]): boolean {
  return a.some((x) => b.some((y) => patternsOverlap(x, y)));
}

export type ScopeMatcher = (path: string) => boolean;

/**
 * A matcher for repository-relative paths as git prints them. An entry without glob
 * characters names a file or a whole directory ("src/auth" covers "src/auth/x.ts"), as
 * in .gitignore; entries with globs are picomatch globs (dotfiles included).
 */
export function scopeMatcher(scope: readonly string[]): ScopeMatcher {
  // (a plan's scope is asked about at every QA run and delivery: compiled once)
  let matcher = compiled.get(scope);
  if (!matcher) compiled.set(scope, (matcher = compileScope(scope)));
  return matcher;
}

const compiled = new WeakMap<readonly string[], ScopeMatcher>();

function compileScope(scope: readonly string[]): ScopeMatcher {
  const patterns = scope.flatMap((entry) => {
    const trimmed = entry.replace(/\/+$/, '');
    return literalPrefix(entry).isGlob ? [entry] : [trimmed, `${trimmed}/**`];
  });
  // (flags 's': picomatch's `**` is built of `.`, which without it stops at a newline, so a
  // file named with one inside the scope was called outside it)
  return picomatch(patterns, { dot: true, flags: 's' });
}
