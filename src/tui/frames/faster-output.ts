import { ansiCodesToString, diffAnsiCodes } from '@alcalzone/ansi-tokenize';
import type { AnsiCode, StyledChar } from '@alcalzone/ansi-tokenize';
import sliceAnsi from 'slice-ansi';
import { inkOutputClass } from './ink-output-class.js';

// Ink's frames, made the same but cheaper. Each frame Ink writes every text into a grid of
// cells (Output.get): a new object with a new style array for each of the screen's cells
// (7,680 at 160x48), every line tokenised again (its caches live for one frame), and each
// row joined with a diff of every pair of neighbouring cells' styles (three Sets each, even
// for two unstyled blanks). With a hundred lanes integrating that was a third of the
// coordinator's thread and most of its garbage (docs/PERFORMANCE.md "Ink's frames"). This
// get() writes the same string: the blank cell is one shared object, the line caches live
// across frames (dropped whole past MAX_CACHED lines), and neighbours with equal styles
// (what a diff turns into nothing) are not diffed.

interface Caches {
  styledChars: Map<string, StyledChar[]>;
  getStyledChars(line: string): StyledChar[];
  getStringWidth(text: string): number;
  getWidestLine(text: string): number;
}

type Clip = { x1?: number; x2?: number; y1?: number; y2?: number };
type Operation =
  | {
      type: 'write';
      x: number;
      y: number;
      text: string;
      transformers: ((line: string, index: number) => string)[];
    }
  | { type: 'clip'; clip: Clip }
  | { type: 'unclip' };

interface OutputLike {
  width: number;
  height: number;
  operations: Operation[];
  caches: Caches;
}

export interface OutputClass {
  new (options: { width: number; height: number }): OutputLike;
  prototype: { get(this: OutputLike): { output: string; height: number } };
}

// (a line of a 160-column screen is ~15 KB of cells: at most ~15 MB kept)
const MAX_CACHED = 1000;
const FASTER = Symbol.for('lanes.faster-output');

// (shared by every cell no text covers: the grid is read, never changed in place)
const BLANK: StyledChar = { type: 'char', value: ' ', fullWidth: false, styles: [] };

const sameStyles = (a: AnsiCode[], b: AnsiCode[]): boolean =>
  a === b ||
  (a.length === b.length && a.every((code, i) => code.code === b[i]!.code && code.endCode === b[i]!.endCode));

/** What ansi-tokenize's styledCharsToString writes for `chars`. */
function rowText(chars: StyledChar[]): string {
  let text = chars.length > 0 ? ansiCodesToString(chars[0]!.styles) : '';
  for (let i = 0; i < chars.length; i++) {
    const styles = chars[i]!.styles;
    if (i > 0 && !sameStyles(chars[i - 1]!.styles, styles))
      text += ansiCodesToString(diffAnsiCodes(chars[i - 1]!.styles, styles));
    text += chars[i]!.value;
  }
  const last = chars.at(-1);
  return last && last.styles.length > 0 ? text + ansiCodesToString(diffAnsiCodes(last.styles, [])) : text;
}

let shared: Caches | null = null;

/** Ink's Output.get, as Ink 6.8 writes it (build/output.js), with the savings above. */
function get(this: OutputLike): { output: string; height: number } {
  if (shared === null || shared.styledChars.size > MAX_CACHED) shared = this.caches;
  const caches = shared;
  const output: StyledChar[][] = Array.from({ length: this.height }, () =>
    new Array<StyledChar>(this.width).fill(BLANK),
  );
  const clips: Clip[] = [];
  for (const operation of this.operations) {
    if (operation.type === 'clip') clips.push(operation.clip);
    if (operation.type === 'unclip') clips.pop();
    if (operation.type !== 'write') continue;
    const { text, transformers } = operation;
    let { x, y } = operation;
    let lines = text.split('\n');
    const clip = clips.at(-1);
    if (clip) {
      const horizontally = typeof clip.x1 === 'number' && typeof clip.x2 === 'number';
      const vertically = typeof clip.y1 === 'number' && typeof clip.y2 === 'number';
      if (horizontally && (x + caches.getWidestLine(text) < clip.x1! || x > clip.x2!)) continue;
      if (vertically && (y + lines.length < clip.y1! || y > clip.y2!)) continue;
      if (horizontally) {
        lines = lines.map((line) => {
          const from = x < clip.x1! ? clip.x1! - x : 0;
          const width = caches.getStringWidth(line);
          return sliceAnsi(line, from, x + width > clip.x2! ? clip.x2! - x : width);
        });
        if (x < clip.x1!) x = clip.x1!;
      }
      if (vertically) {
        const from = y < clip.y1! ? clip.y1! - y : 0;
        const to = y + lines.length > clip.y2! ? clip.y2! - y : lines.length;
        lines = lines.slice(from, to);
        if (y < clip.y1!) y = clip.y1!;
      }
    }
    let offsetY = 0;
    for (const [index, raw] of lines.entries()) {
      const row = output[y + offsetY];
      if (!row) continue; // (taller than the screen)
      const line = transformers.reduce((done, transformer) => transformer(done, index), raw);
      let offsetX = x;
      for (const character of caches.getStyledChars(line)) {
        row[offsetX] = character;
        const width = Math.max(1, caches.getStringWidth(character.value));
        // (a wide character's other columns are empty, so that no stray blank shows there)
        for (let k = 1; k < width; k++)
          row[offsetX + k] = { type: 'char', value: '', fullWidth: false, styles: character.styles };
        offsetX += width;
      }
      offsetY++;
    }
  }
  return {
    output: output.map((row) => rowText(row.filter((cell) => cell !== undefined)).trimEnd()).join('\n'),
    height: output.length,
  };
}

/** Gives `Output` the get() above, once; left as it is when it is not the class this was written for. */
export function fasterOutput(given: unknown): boolean {
  if (typeof given !== 'function') return false;
  const Output = given as OutputClass;
  const proto = Output.prototype as OutputClass['prototype'] & { [FASTER]?: true };
  if (proto[FASTER]) return true;
  const probe = new Output({ width: 1, height: 1 });
  const fits =
    Array.isArray(probe.operations) &&
    typeof probe.caches?.getStyledChars === 'function' &&
    typeof probe.caches.getStringWidth === 'function' &&
    typeof probe.caches.getWidestLine === 'function' &&
    probe.caches.styledChars instanceof Map;
  if (!fits) return false;
  proto.get = get;
  proto[FASTER] = true;
  return true;
}

/** Ink's frames from here on are written by the get() above (before the first render). */
export async function useFasterOutput(): Promise<boolean> {
  return fasterOutput(await inkOutputClass());
}
