import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain script (docs/screens/make-screens.mjs), without types
import { captureScreens, normalise, SCREENS } from '../../docs/screens/make-screens.mjs';
import { BINDINGS } from '../../src/tui/keymap.js';

// The built `lanes demo` in tmux at a terminal's default size (80×24) and at 160×48, by the
// script that makes docs/screens/: each screen fits, keeps the keys that apply, leaves
// nothing of an earlier frame; the help lists every key; and the screens in docs/screens/
// are what this build draws (`node docs/screens/make-screens.mjs` rewrites them).

type Shots = Record<string, string> & { helpPages: string[] };
const capture = captureScreens as (cols: number, rows: number) => Promise<Shots>;
const normal = normalise as (name: string, screen: string) => string;
const NAMES = SCREENS as string[];
const DOCS = join(import.meta.dirname, '..', '..', 'docs', 'screens');

const linesOf = (screen: string) => screen.replace(/\n+$/, '').split('\n');
const keyBar = (screen: string) => linesOf(screen).at(-1)!;

/** Below the header, each row's lane-list column is a lane, its reason, a count of more, or blank. */
function strayListText(screen: string, listWidth: number): string[] {
  return linesOf(screen)
    .slice(1, -1)
    .map((l) => [...l].slice(0, listWidth).join('').trimEnd())
    .filter(
      (l) => l !== '' && !/^[› ] \w+ +[a-z_]+/.test(l) && !/^ {3}\S/.test(l) && !/^ {2}[↑↓] \d+ more/.test(l),
    );
}

function checkScreens(shots: Shots, cols: number, rows: number) {
  const listWidth = cols >= 96 ? 44 : Math.max(28, cols - 52);
  for (const name of ['lanes', 'grid', 'attached', 'parked', 'completed', 'help']) {
    const screen = shots[name]!;
    const lines = linesOf(screen);
    expect(lines.length, name).toBeLessThanOrEqual(rows);
    for (const line of lines) expect([...line].length, `${name}: ${line}`).toBeLessThanOrEqual(cols);
    // The header keeps its count and its clock; the key bar is the last row, nothing after it.
    expect(lines[0], name).toMatch(/^lanes · demo {2}.*\d+\/8 integrated {2}(\d+m)?\d+s$/);
    expect(keyBar(screen), name).toMatch(/\? keys|^ctrl-g detach$/);
    if (name !== 'help') expect(strayListText(screen, listWidth), name).toEqual([]);
  }
  // The keys that apply, each whole, and ? and q always.
  for (const [name, keys] of Object.entries({
    lanes: ['enter attach', 'g grid', 'd diff', 'l QA log', 's shell'],
    grid: ['enter attach', 'g grid'],
    parked: ['l QA log', 'r resume', 'R retry', 'D drop', 'C cancel'],
    completed: ['L land'],
  }))
    for (const key of [...keys, '? keys', 'q quit']) expect(keyBar(shots[name]!), name).toContain(key);
  expect(keyBar(shots.attached!)).toBe('ctrl-g detach');
  // The parked lane's reason and ways on, wrapped in the list, not cut.
  const parkedList = linesOf(shots.parked!)
    .map((l) => [...l].slice(0, listWidth).join('').trim())
    .join(' ');
  expect(parkedList).toContain('QA failure limit reached');
  expect(parkedList).toMatch(/fix the lane, then r resume or R retry; D drops it/);
  // The confirmation: every wave, and its keys.
  expect(shots.confirm).toMatch(/8 children in 4 waves[\s\S]*wave 4: index[\s\S]*y start +n cancel/);
  // The help: inside its box only, and over its pages every key.
  const help = shots.helpPages.join('\n');
  for (const page of shots.helpPages)
    for (const line of linesOf(page).slice(1, -1)) expect(line).toMatch(/^[│╭╰].*[│╮╯]$/);
  for (const b of BINDINGS)
    if (b.shown) expect(help).toMatch(new RegExp(`│ ${b.shown.replace(/[?/]/g, '\\$&')} +\\S`));
  expect(help).toMatch(/│ s +a shell in the lane/);
  expect(help).toMatch(/│ ctrl-g +detach from a pane/);
  expect(shots.exit).toMatch(/^EXIT=0$/m);
}

function checkDocs(shots: Shots, folder: string) {
  for (const name of NAMES)
    expect(normal(name, shots[name]!), `docs/screens/${folder}${name}.txt`).toBe(
      readFileSync(join(DOCS, folder, `${name}.txt`), 'utf8'),
    );
}

describe('the screens of the built TUI in tmux', () => {
  it('at 80×24: the confirmation, lane list, grid, help, attach and parked screens fit, whole', async () => {
    const shots = await capture(80, 24);
    checkScreens(shots, 80, 24);
    checkDocs(shots, '80x24/');
  }, 400_000);

  it('at 160×48, as in docs/screens/', async () => {
    const shots = await capture(160, 48);
    checkScreens(shots, 160, 48);
    checkDocs(shots, '');
  }, 400_000);
});
