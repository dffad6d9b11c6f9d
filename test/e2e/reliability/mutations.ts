import fc from 'fast-check';

// Random mutations of JSON documents and their text, for the fuzz tests: one mutation
// picks a place in the document (any object field or array element, or the root) and
// deletes, replaces, duplicates or adds something there.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

type Path = (string | number)[];

export interface Mutation {
  pick: number;
  kind: 'delete' | 'set' | 'duplicate' | 'add-key' | 'swap' | 'retype';
  value: Json;
  key: string;
}

/** Values that tend to break things: hostile strings, ids of the documents, odd numbers. */
const interestingArb: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>(
    '',
    ' ',
    '.',
    './',
    '..',
    '../x',
    'a/../b',
    '/abs/path',
    'C:\\x',
    '$(touch /tmp/CANARY)',
    '`id`',
    'a;b',
    'a\nb',
    'nul\u0000byte',
    'x.lock',
    'x.',
    '-rf',
    '**',
    '[',
    '{a,b}',
    'T1',
    'T2',
    'T3',
    'x',
    'c1',
    'A1',
    'human',
    'main',
    'completed',
    'pending',
    'needs_human',
    'x'.repeat(5000),
    '0'.repeat(40),
    'f'.repeat(64),
    0,
    -1,
    1,
    1.5,
    1e21,
    Number.MAX_SAFE_INTEGER,
    true,
    null,
    [],
    {},
    [''],
    ['T1'],
    ['T1', 'T1'],
    ['T2', 'T3'],
  ),
  fc.string({ maxLength: 12 }),
  fc.integer({ min: -3, max: 200 }),
  fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>,
);

export const mutationArb: fc.Arbitrary<Mutation> = fc.record({
  pick: fc.nat(),
  kind: fc.constantFrom<Mutation['kind']>('delete', 'set', 'set', 'duplicate', 'add-key', 'swap', 'retype'),
  value: interestingArb,
  key: fc.oneof(
    fc.constantFrom(
      'id',
      'state',
      'extra',
      'lane',
      'commit',
      'blocked_by',
      'scope',
      '__proto__',
      'constructor',
    ),
    fc.string({ maxLength: 6 }),
  ),
});

function paths(value: Json, at: Path = [], out: Path[] = []): Path[] {
  out.push(at);
  if (Array.isArray(value)) value.forEach((v, i) => paths(v, [...at, i], out));
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) paths(v, [...at, k], out);
  return out;
}

function getAt(root: Json, path: Path): Json {
  let cur: Json = root;
  for (const p of path) cur = (cur as Record<string | number, Json>)[p] as Json;
  return cur;
}

function retype(v: Json): Json {
  if (typeof v === 'string') return /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : [v];
  if (typeof v === 'number') return String(v);
  if (Array.isArray(v)) return v.length === 1 ? (v[0] as Json) : JSON.stringify(v);
  if (v === null) return 'null';
  if (typeof v === 'object') return Object.values(v);
  return String(v);
}

/** Applies one mutation to a copy of `root`. */
export function applyMutation(root: Json, m: Mutation): Json {
  const doc = structuredClone(root);
  const all = paths(doc);
  const path = all[m.pick % all.length] as Path;
  if (path.length === 0) return m.kind === 'set' ? m.value : m.kind === 'retype' ? retype(doc) : doc;
  const parent = getAt(doc, path.slice(0, -1)) as Record<string | number, Json> | Json[];
  const last = path[path.length - 1] as string | number;
  const current = getAt(doc, path);
  switch (m.kind) {
    case 'delete':
      if (Array.isArray(parent)) parent.splice(last as number, 1);
      else delete parent[last];
      break;
    case 'set':
      (parent as Record<string | number, Json>)[last] = m.value;
      break;
    case 'retype':
      (parent as Record<string | number, Json>)[last] = retype(current);
      break;
    case 'duplicate':
      if (Array.isArray(parent)) parent.splice(last as number, 0, structuredClone(current));
      else
        Object.defineProperty(parent, m.key, {
          value: structuredClone(current),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      break;
    case 'add-key':
      if (current !== null && typeof current === 'object' && !Array.isArray(current))
        Object.defineProperty(current, m.key, {
          value: m.value,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      else if (Array.isArray(current)) current.push(m.value);
      break;
    case 'swap':
      if (Array.isArray(parent) && parent.length > 1) {
        const other = (m.pick >> 3) % parent.length;
        const a = parent[last as number] as Json;
        parent[last as number] = parent[other] as Json;
        parent[other] = a;
      }
      break;
  }
  return doc;
}

const NASTY_CHARS = [
  '"',
  "'",
  ':',
  '-',
  '{',
  '}',
  '[',
  ']',
  ',',
  '\n',
  ' ',
  '\t',
  '\u0000',
  '&',
  '*',
  '!',
  '#',
  '\\',
  'é',
  '\uFEFF',
];

/** A random corruption of a document's text: a cut, a dropped, inserted or replaced character, a doubled line. */
export const textCorruptionArb: fc.Arbitrary<(text: string) => string> = fc
  .tuple(
    fc.constantFrom('cut', 'drop', 'insert', 'replace', 'double-line'),
    fc.nat(),
    fc.constantFrom(...NASTY_CHARS),
  )
  .map(([kind, pos, ch]) => (text: string) => {
    const i = text.length === 0 ? 0 : pos % text.length;
    if (kind === 'cut') return text.slice(0, i);
    if (kind === 'drop') return text.slice(0, i) + text.slice(i + 1);
    if (kind === 'insert') return text.slice(0, i) + ch + text.slice(i);
    if (kind === 'replace') return text.slice(0, i) + ch + text.slice(i + 1);
    const lines = text.split('\n');
    const j = pos % lines.length;
    return [...lines.slice(0, j + 1), ...lines.slice(j)].join('\n');
  });
