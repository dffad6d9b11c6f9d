import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import stringWidth8 from 'string-width';
import stripAnsi from 'strip-ansi';
// (wrap-ansi's own copy, string-width 7: the bundle puts the fast path in front of both)
import stringWidth7 from '../../../node_modules/wrap-ansi/node_modules/string-width/index.js';
import { NARROW_CHARS, withNarrowPath } from '../../../src/tui/width/narrow-width.js';
import type { WidthOf } from '../../../src/tui/width/narrow-width.js';

// The fast path gives every width string-width gives: each narrow character is one column
// and a grapheme of its own in both copies (so a text made of them is as wide as it is
// long), and on mixed text (emoji, CJK, combining marks, controls, ANSI, options) the two
// agree everywhere.

const COPIES: [string, WidthOf][] = [
  ['string-width 8 (Ink, cli-truncate, widest-line)', stringWidth8],
  ['string-width 7 (wrap-ansi)', stringWidth7],
];

/** Every character of NARROW_CHARS' ranges. */
function narrowChars(): string[] {
  const chars: string[] = [];
  for (const [, from, to] of NARROW_CHARS.matchAll(/\\u([0-9A-F]{4})(?:-\\u([0-9A-F]{4}))?/g)) {
    const first = parseInt(from!, 16);
    const last = to === undefined ? first : parseInt(to, 16);
    for (let c = first; c <= last; c++) chars.push(String.fromCodePoint(c));
  }
  return chars;
}

const segments = (text: string) => [...new Intl.Segmenter().segment(text)].length;

const PIECES = [
  // narrow: what a frame is made of
  'a',
  'Z',
  ' ',
  '~',
  '─',
  '│',
  '╭',
  '╮',
  '╰',
  '╯',
  '…',
  '·',
  '—',
  '→',
  '↑',
  '░',
  '█',
  '✓',
  '✗',
  '×',
  '≥',
  '›',
  'é',
  '§',
  '⠋',
  // wide, emoji, clusters
  '漢',
  '字',
  'ｶ',
  'ﾞ',
  'ー',
  '한',
  '\u1100\u1161',
  '👍',
  '👍🏽',
  '❤️',
  '❤',
  '👨‍👩‍👧',
  '🇯🇵',
  '1️⃣',
  '#⃣',
  '⌚',
  '▶',
  '▶️',
  '↔',
  '©',
  '®',
  '‼',
  // zero-width, combining, controls
  'e\u0301',
  '\u0300',
  '\u200d',
  '\ufe0f',
  '\u00ad',
  '\u200b',
  '\t',
  '\n',
  '\r',
  '\x07',
  '\x7f',
  '\x85',
  '\u2028',
  '\ud800',
  // ANSI: colours, resets, a link, a lone introducer, C1 controls
  '\x1b[31m',
  '\x1b[0m',
  '\x1b[1;94m',
  '\x1b[39m',
  '\x1b]8;;https://x.invalid\x07',
  '\x1b]8;;\x07',
  '\x1b[',
  '\x1b',
  '\x9b31m',
  '\x9d0;t\x07',
];

const OPTIONS = [
  undefined,
  {},
  { ambiguousIsNarrow: true },
  { ambiguousIsNarrow: false },
  { countAnsiEscapeCodes: true },
];

describe.each(COPIES)('the fast path in front of %s', (_name, real) => {
  const fast = withNarrowPath(real, stripAnsi);

  it('counts each narrow character as one column and one grapheme, beside any other', () => {
    const wrong = narrowChars().filter(
      (c) =>
        real(c) !== 1 ||
        real(`a${c}a`) !== 3 ||
        real(`${c}${c}`) !== 2 ||
        segments(`a${c}a`) !== 3 ||
        segments(`${c}${c}`) !== 2,
    );
    expect(wrong.map((c) => `U+${c.codePointAt(0)!.toString(16)}`)).toEqual([]);
  });

  it('gives the width string-width gives, on any mix of pieces and options', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...PIECES), { maxLength: 40 }),
        fc.constantFrom(...OPTIONS),
        (pieces, options) => {
          const text = pieces.join('');
          expect(fast(text, options)).toBe(real(text, options));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('gives the width string-width gives on any text at all', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 30 }), (text) => {
        expect(fast(text)).toBe(real(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('measures a frame of box drawing and colour without string-width, and anything else with it', () => {
    let calls = 0;
    const counted = withNarrowPath((text, options) => (calls++, real(text, options)), stripAnsi);
    const border = `\x1b[94m╭${'─'.repeat(156)}╮\x1b[39m`;
    expect(counted(border)).toBe(158);
    const line = '│ batch first0: 1 child in 1 wave from HEAD (d8a37bca8a0c) │';
    expect(counted(line)).toBe(line.length);
    expect(calls).toBe(0);
    expect(counted('│ 漢字 │')).toBe(real('│ 漢字 │'));
    expect(counted('ok ✓\ufe0f')).toBe(real('ok ✓\ufe0f'));
    expect(counted('│', { ambiguousIsNarrow: false })).toBe(2);
    expect(calls).toBe(3);
  });
});
