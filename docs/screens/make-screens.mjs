#!/usr/bin/env node
// The screens in docs/screens/, made from the current build: `lanes demo` (dist/lanes/main.js,
// `npm run build` first) run in a tmux server of its own at 80×24 and at 160×48, driven with
// send-keys and read with capture-pane at the key moments (each step waits for what the
// screen shows, polled, never for a time). What changes from run to run (temporary paths,
// hashes, times, the lanes that happen to run beside the one shown) is written as
// placeholders, so a run of the same build gives the same files.
//
//   node docs/screens/make-screens.mjs           write docs/screens/<screen>.txt (160×48) and
//                                                docs/screens/80x24/<screen>.txt
//   node docs/screens/make-screens.mjs --check   compare with them; exit 1 naming each that differs
//
// test/e2e/tui-screens.test.ts runs it with --check; test/e2e/tui-small.test.ts reads the
// captures (captureScreens) to check the 80×24 screens.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleepFor } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const CLI = join(HERE, '..', '..', 'dist', 'lanes', 'main.js');
export const SIZES = [
  [80, 24],
  [160, 48],
];
/** How long each scripted demo executor "works": long enough to capture wave 1 at work. */
const DELAY_MS = 5000;
const POLL_MS = 100;
/** Wave 1 before its lanes have written their files. */
const NOT_WRITTEN = /^(?![\s\S]*: wrote )/;
/** No pane line cut at its border: every pane has its cell's size. */
const RESIZED = /^(?![\s\S]*…│)/;
const SQRT_FIX =
  'export const sqrt = (x) => {\n  let r = x;\n  for (let i = 0; i < 50; i++) r = (r + x / r) / 2;\n  return r;\n};\n';

function terminalEnv() {
  const env = { ...process.env };
  for (const name of [
    'CI',
    'CONTINUOUS_INTEGRATION',
    'NODE_ENV',
    'FORCE_COLOR',
    'NO_COLOR',
    'TMUX',
    'TMUX_PANE',
  ])
    delete env[name];
  for (const name of Object.keys(env))
    if (name.startsWith('VITEST') || name.startsWith('HERDR')) delete env[name];
  return env;
}

class Terminal {
  constructor(cols, rows) {
    this.socket = `lanes-screens-${process.pid}-${cols}x${rows}-${Math.random().toString(36).slice(2, 7)}`;
    this.env = terminalEnv();
    this.last = '';
  }
  tmux(...args) {
    return execFileSync('tmux', ['-f', '/dev/null', '-L', this.socket, ...args], {
      env: this.env,
      encoding: 'utf8',
    });
  }
  capture() {
    return this.tmux('capture-pane', '-p', '-t', 'main');
  }
  keys(...keys) {
    for (const key of keys) this.tmux('send-keys', '-t', 'main', key);
  }
  text(text) {
    this.tmux('send-keys', '-t', 'main', '-l', text);
  }
  /** Polls until a whole frame matches every pattern; returns it, or throws with the last one. */
  async waitFor(patterns, what, timeoutMs = 120_000) {
    const all = Array.isArray(patterns) ? patterns : [patterns];
    const end = Date.now() + timeoutMs;
    while (Date.now() < end) {
      const screen = this.capture();
      this.last = screen;
      if (whole(screen) && all.every((p) => p.test(screen))) return screen;
      await sleepFor(POLL_MS); // the poll's interval, not a synchronisation
    }
    throw new Error(`timed out waiting for ${what}; the screen shows:\n${this.last}`);
  }
  kill() {
    try {
      this.tmux('kill-server');
    } catch {
      // (already gone)
    }
    const uid = process.getuid?.() ?? 0;
    rmSync(join(process.env.TMUX_TMPDIR ?? '/tmp', `tmux-${uid}`, this.socket), { force: true });
  }
}

/** A capture can fall in the middle of a redraw: a frame is whole once its last row is there. */
function whole(screen) {
  if (screen.includes('Start this batch?')) return /y start +n cancel[^\n]*\n *╰/.test(screen);
  if (screen.startsWith('lanes · ')) return /(\? keys|^ctrl-g detach)[^\n]*$/m.test(screen);
  return true;
}

/** j or k, one key at a time, until `id` is the selected lane. */
async function select(term, id, key) {
  for (let i = 0; i < 12; i++) {
    const screen = term.capture();
    if (new RegExp(`^› ${id} `, 'm').test(screen)) return;
    const before = /^› (\w+)/m.exec(screen)?.[1];
    term.keys(key);
    await term.waitFor(new RegExp(`^› (?!${before} )\\w+ `, 'm'), `the selection to leave ${before}`, 10_000);
  }
  throw new Error(`could not select ${id}`);
}

/**
 * The demo at cols×rows, captured at each key moment: the raw captures (for the tests of
 * the screens) and every page of the help.
 */
export async function captureScreens(cols, rows) {
  const dir = join(mkdtempSync(join(tmpdir(), 'lanes-screens-')), 'demo');
  const term = new Terminal(cols, rows);
  const shots = {};
  try {
    const argv = [process.execPath, CLI, 'demo', '--dir', dir].map((a) => `'${a}'`).join(' ');
    term.tmux(
      'new-session',
      '-d',
      '-s',
      'main',
      '-x',
      String(cols),
      '-y',
      String(rows),
      '-c',
      tmpdir(),
      `LANES_DEMO_DELAY_MS=${DELAY_MS} ${argv}; echo EXIT=$?; sleep 600`,
    );
    shots.confirm = await term.waitFor(
      /Start this batch\?[\s\S]*y start +n cancel/,
      'the confirmation',
      60_000,
    );
    term.keys('y');
    // Wave 1 at work: each lane has said its goal and not yet written its file.
    shots.lanes = await term.waitFor(
      [/│add: Add an add/, /^ {2}mul +enrolled/m, /^ {2}index +pending/m, NOT_WRITTEN],
      'wave 1 at work',
      60_000,
    );
    // The grid first: it needs wave 1 still at work, and the tour of the help's pages can
    // outlast that on a loaded machine (CI saw the grid never come).
    term.keys('g');
    // The panes take the grid's size a moment after it opens: until then a line printed at
    // the single pane's width is cut (…) where, resized, it wraps. The capture waits for that.
    shots.grid = await term.waitFor(
      [/╮╭/, /│sub: Add/, /│mul: Add/, NOT_WRITTEN, RESIZED],
      'the grid',
      30_000,
    );
    term.keys('g');
    await term.waitFor(/^(?![\s\S]*╮╭)/, 'the grid to close', 10_000);
    term.keys('?');
    shots.help = await term.waitFor(/keys \(1-/, 'the help');
    shots.helpPages = [shots.help];
    for (let top = 2; !/end · any other key closes/.test(shots.helpPages.at(-1)); top++) {
      if (top > 60) throw new Error(`the help does not reach its end:\n${shots.helpPages.at(-1)}`);
      term.keys('j');
      shots.helpPages.push(await term.waitFor(new RegExp(`keys \\(${top}-`), 'the help to scroll', 10_000));
    }
    term.keys('Escape');
    await term.waitFor(/^(?![\s\S]*any other key closes)/, 'the help to close', 10_000);

    // index asks for a word: select it, attach, answer, detach.
    await term.waitFor(/^[› ] index +enrolled +waiting/m, 'index waiting', 240_000);
    await select(term, 'index', 'j');
    term.keys('Enter');
    await term.waitFor(/│index · attached/, 'the attached pane', 10_000);
    term.text('hello lanes');
    shots.attached = await term.waitFor(/\(20 s\) hello lan/, 'the typed answer', 10_000);
    term.keys('Enter');
    await term.waitFor(/│index: got: hello lanes/, 'the answer taken', 15_000);
    term.keys('C-g');
    await term.waitFor(/\? keys/, 'the detach', 10_000);

    // sqrt keeps failing QA and parks; everything else lands.
    const others = ['add', 'sub', 'mul', 'pow', 'div', 'mean', 'index'];
    await term.waitFor(
      [
        /needs_human/,
        /^[› ] sqrt +needs_human/m,
        ...others.map((id) => new RegExp(`^[› ] ${id} +released`, 'm')),
      ],
      'sqrt parked, the rest released',
      240_000,
    );
    await select(term, 'sqrt', 'k');
    shots.parked = await term.waitFor(/^› sqrt +needs_human[^\n]*\n {3}\S/m, 'the parked lane', 10_000);
    writeFileSync(join(dir, 'calc.lanes', 'demo', 'sqrt', 'src', 'sqrt.mjs'), SQRT_FIX);
    term.keys('r');
    shots.completed = await term.waitFor(
      [/ completed /, /^[› ] sqrt +released/m],
      'the batch completed',
      240_000,
    );
    term.keys('q');
    shots.exit = await term.waitFor(/^EXIT=\d+$/m, 'the exit', 30_000);
    return shots;
  } finally {
    term.kill();
    rmSync(dirname(dir), { recursive: true, force: true });
  }
}

/** The names of the screens kept in docs/screens/. */
export const SCREENS = ['confirm', 'lanes', 'help', 'grid', 'attached', 'parked', 'completed'];

/** A capture with what changes from run to run written as placeholders. */
export function normalise(name, screen) {
  let text = screen
    .replace(/\/tmp\/lanes-screens-\w+\/demo/g, '<dir>')
    .replace(/\((?:[0-9a-f]{12})\)/g, '(<sha>)')
    .replace(/\b\d+m\d\ds\b/g, '0s')
    .replace(/\b\d+s\b/g, '0s');
  if (name === 'attached') {
    // The lanes beside index run at their own pace: only index's row and pane are kept
    // (the others' rows say their name; the pane's border stays where index's row has it).
    const border = /^› index [^│]*/m.exec(text)?.[0].length ?? 0;
    text = text
      .replace(/^( {2}\w+) +[a-z_]+[^│╭╰]*/gm, (_m, id) => `${id} ·`.padEnd(border))
      .replace(/wave \d+\/\d+/, 'wave ?/?')
      .replace(/\d+\/(\d+) integrated/, '?/$1 integrated')
      .replace(/[█░]{20}/, '░'.repeat(20));
  }
  const lines = text.split('\n').map((l) => l.trimEnd());
  while (lines.length && lines.at(-1) === '') lines.pop();
  return `${lines.join('\n')}\n`;
}

async function main() {
  const check = process.argv.includes('--check');
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build first`);
  const differ = [];
  for (const [cols, rows] of SIZES) {
    const shots = await captureScreens(cols, rows);
    const folder = cols === 160 ? HERE : join(HERE, `${cols}x${rows}`);
    mkdirSync(folder, { recursive: true });
    for (const name of SCREENS) {
      const file = join(folder, `${name}.txt`);
      const text = normalise(name, shots[name]);
      const shown = file.slice(HERE.length - 'docs/screens'.length);
      if (!check) writeFileSync(file, text);
      else if (!existsSync(file) || readFileSync(file, 'utf8') !== text) {
        differ.push(shown);
        process.stderr.write(`--- ${shown}\n+++ the current build\n${text}\n`);
      }
    }
  }
  if (differ.length) {
    process.stderr.write(
      `screens that do not match the build: ${differ.join(', ')} (node docs/screens/make-screens.mjs rewrites them)\n`,
    );
    process.exitCode = 1;
  } else process.stdout.write(check ? 'the screens match the build\n' : 'screens written\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url))
  main().catch((error) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 2;
  });
