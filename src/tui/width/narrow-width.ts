// A fast path in front of string-width for the strings a frame of lanes is made of. Ink and
// the packages it draws with (wrap-ansi, cli-truncate, widest-line) measure every line with
// string-width, which segments any line that is not plain ASCII into graphemes
// (Intl.Segmenter) and tests each against Unicode property and emoji regexes: 100-180 ms of
// the first frame on a loaded machine, since every border line has box drawing in it. The
// bundle (rolldown.config.mjs) puts this in front of each copy of string-width it holds, with
// that copy as the fallback, so every width is the one string-width gives (proved against
// both copies in test/tui/width/).

/** string-width's options (string-width 7 and 8 have the same two). */
export interface WidthOptions {
  readonly ambiguousIsNarrow?: boolean;
  readonly countAnsiEscapeCodes?: boolean;
}

/** A string-width: the columns `text` takes in a terminal. */
export type WidthOf = (text: string, options?: WidthOptions) => number;

/**
 * Characters one column wide, each a grapheme of its own beside any other of them: printable
 * ASCII, Latin-1 (not the soft hyphen, nor © and ®, emoji where a variation selector
 * follows), general punctuation (dashes, quotes, bullets, …), the four plain arrows,
 * mathematical operators, box drawing, block elements, geometric shapes (not the ones that
 * are emoji), check marks and crosses, braille (spinners). Chosen by what both copies of
 * string-width answer, and checked against them character by character by the test.
 */
export const NARROW_CHARS =
  '\\u0020-\\u007E\\u00A0-\\u00A8\\u00AA-\\u00AC\\u00AF-\\u00FF\\u2010-\\u2027\\u2030-\\u203B' +
  '\\u203D-\\u2048\\u2190-\\u2193\\u2200-\\u2319\\u2500-\\u25A9\\u25AC-\\u25B5\\u25B7-\\u25BF' +
  '\\u25C1-\\u25FA\\u2713\\u2715\\u2717-\\u271C\\u2800-\\u28FF';

const ALL_NARROW = new RegExp(`^[${NARROW_CHARS}]*$`);

/**
 * `real` with a fast path: a text that is, once its ANSI escapes are taken out (by the same
 * strip-ansi string-width uses), made only of narrow characters is as wide as it is long.
 * Anything else (wide, emoji, combining, control characters, options other than the
 * defaults) is `real`'s to measure.
 */
export function withNarrowPath(real: WidthOf, stripAnsi: (text: string) => string): WidthOf {
  return (text, options) => {
    if (typeof text !== 'string' || (options !== undefined && !defaults(options))) return real(text, options);
    const plain = stripAnsi(text);
    return ALL_NARROW.test(plain) ? plain.length : real(text, options);
  };
}

/** Options that measure as none do: ambiguous characters narrow, escapes not counted. */
function defaults(options: WidthOptions): boolean {
  if (typeof options !== 'object' || options === null) return false; // (string-width's to answer)
  const narrow = options.ambiguousIsNarrow;
  return (narrow === undefined || narrow === true) && !options.countAnsiEscapeCodes;
}
