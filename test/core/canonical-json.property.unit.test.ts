import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/core/basics/canonical-json.js';

// canonicalJson writes text directly. The oracle is the earlier definition (a copy with
// sorted keys, then JSON.stringify), so plan digests stay what earlier versions recorded.
// The two differ only on keys that are array indexes ("0", "12"): a JS object lists those
// first whatever their insertion order, so the copy never sorted them. Plan digests have
// fixed field names, never such keys; canonicalJson sorts them like any other key.
function sortedCopy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedCopy);
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return Object.fromEntries(entries.map(([k, v]) => [k, sortedCopy(v)]));
  }
  return value;
}

function hasIndexKey(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasIndexKey);
  if (value !== null && typeof value === 'object')
    return Object.entries(value).some(([k, v]) => /^(0|[1-9][0-9]*)$/.test(k) || hasIndexKey(v));
  return false;
}

/**
 * The keys of every object in a JSON text, in the order the text lists them (JSON.parse
 * would reorder index-like keys, so the text is scanned: a string followed by ":" is a key
 * of the innermost open object).
 */
function keyLists(text: string): string[][] {
  const done: string[][] = [];
  const open: string[][] = [];
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '{') open.push([]);
    else if (ch === '}') done.push(open.pop() as string[]);
    else if (ch === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (text[j + 1] === ':') open[open.length - 1]?.push(JSON.parse(text.slice(i, j + 1)) as string);
      i = j;
    }
  }
  return done;
}

describe('canonicalJson', () => {
  it('equals JSON.stringify of a key-sorted copy, for JSON values without index-like keys', () => {
    fc.assert(
      fc.property(
        fc.jsonValue().filter((v) => !hasIndexKey(v)),
        (value) => {
          expect(canonicalJson(value)).toBe(JSON.stringify(sortedCopy(value)));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('reads back as the same value, with the keys of every object in sorted order', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
        for (const keys of keyLists(text)) expect(keys).toEqual([...keys].sort());
      }),
      { numRuns: 500 },
    );
  });

  it('does not depend on key order, and leaves out undefined fields', () => {
    expect(canonicalJson({ b: 1, a: [{ d: undefined, c: 'x' }] })).toBe('{"a":[{"c":"x"}],"b":1}');
    expect(canonicalJson({ a: [{ c: 'x' }], b: 1 })).toBe('{"a":[{"c":"x"}],"b":1}');
    expect(canonicalJson([undefined, 1])).toBe('[null,1]');
    expect(canonicalJson({ b: 1, '10': 2, '9': 3 })).toBe('{"10":2,"9":3,"b":1}');
    expect(keyLists('{"b":{"y":1,"x":"a:\\"}"},"a":[]}')).toEqual([
      ['y', 'x'],
      ['b', 'a'],
    ]);
  });
});
