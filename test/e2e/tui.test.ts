import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { SQRT_FIX } from '../../src/demo/demo-project.js';
import { CLI, tempDir } from '../helpers/repo.js';
import { until } from '../helpers/until.js';
import { terminalEnv } from '../helpers/tmux.js';

// The built `lanes demo` drawn in a real terminal: a tmux server of its own (160×48),
// driven with send-keys and read with capture-pane. Each step waits for what the screen
// shows, never for a time. (The screens in docs/screens/ are made by
// docs/screens/make-screens.mjs and checked by tui-screens.test.ts.)

const SOCKET = `lanes-e2e-${process.pid}-${Date.now().toString(36)}`;
const SESSION = 'demo';
const POLL_MS = 100;

async function tmux(...args: string[]): Promise<string> {
  const result = await execa('tmux', ['-f', '/dev/null', '-L', SOCKET, ...args], {
    env: terminalEnv(),
    extendEnv: false,
  });
  return result.stdout;
}

const sendKey = (key: string) => tmux('send-keys', '-t', SESSION, key);
const sendText = (text: string) => tmux('send-keys', '-t', SESSION, '-l', text);
const capture = () => tmux('capture-pane', '-p', '-t', SESSION);

/** Every state each lane was seen in, in order, over all the captures taken. */
const seen = new Map<string, string[]>();
function noteStates(screen: string): void {
  for (const line of screen.split('\n')) {
    const m = /^[› ] (\w+) +([a-z_]+)\b/.exec(line);
    if (!m) continue;
    const states = seen.get(m[1]!) ?? [];
    if (states.at(-1) !== m[2]) states.push(m[2]!);
    seen.set(m[1]!, states);
  }
}

/**
 * A capture can fall in the middle of a redraw (Ink erases the old frame from the bottom
 * up, then writes the new one from the top): a frame is whole once its last row is there.
 */
function isWhole(screen: string): boolean {
  if (screen.includes('Start this batch?')) return /y start n cancel[^\n]*\n╰/.test(screen);
  if (screen.startsWith('lanes · ')) return /^(j\/k select[^\n]* q quit|ctrl-g detach)$/m.test(screen);
  return true;
}

/** Polls the screen until a whole frame matches; returns the capture. Fails with the last one. */
async function waitForScreen(pattern: RegExp, timeoutMs: number): Promise<string> {
  let screen = '';
  const shown = await until(
    async () => {
      screen = await capture();
      noteStates(screen);
      return isWhole(screen) && pattern.test(screen) ? { screen } : null; // '' can match, and is falsy
    },
    `the screen to show ${String(pattern)}`,
    { timeoutMs, everyMs: POLL_MS, detail: () => `it shows:\n${screen}` },
  );
  return shown.screen;
}

/** j (or k) one key per send-keys call until `taskId` is selected. */
async function selectLane(taskId: string, key: 'j' | 'k'): Promise<string> {
  const selected = new RegExp(`^› ${taskId} `, 'm');
  for (let i = 0; i < 10; i++) {
    const screen = await capture();
    if (selected.test(screen)) return screen;
    const before = /^› (\w+)/m.exec(screen)?.[1];
    await sendKey(key);
    await waitForScreen(new RegExp(`^› (?!${before} )\\w+ `, 'm'), 10_000);
  }
  throw new Error(`could not select ${taskId}`);
}

afterAll(async () => {
  await execa('tmux', ['-L', SOCKET, 'kill-server'], { reject: false });
  // The server leaves its socket file behind.
  const uid = process.getuid?.() ?? 0;
  rmSync(join(process.env.TMUX_TMPDIR ?? '/tmp', `tmux-${uid}`, SOCKET), { force: true });
});

describe('lanes demo in a real terminal', () => {
  it('confirms, runs the lanes, takes input in an attached pane, parks sqrt, resumes after the fix and quits', async () => {
    const dir = join(tempDir('lanes-e2e-'), 'demo');
    const command = `LANES_DEMO_DELAY_MS=300 '${process.execPath}' '${CLI}' demo --dir '${dir}'; echo EXIT=$?; sleep 30`;
    await tmux('new-session', '-d', '-s', SESSION, '-x', '160', '-y', '48', '-c', join(dir, '..'), command);

    // The confirmation screen: the plan's waves; nothing runs before `y`.
    const confirm = await waitForScreen(/Start this batch\?[\s\S]*y start n cancel/, 60_000);
    expect(confirm).toMatch(/batch demo: 8 children in 4 waves/);
    expect(confirm).toMatch(/wave 4: index \(script\)/);
    expect(confirm).toMatch(/max_parallel 3 \(plan\)[\s\S]*executor script \(plan\)/); // each value with its source
    await sendKey('y');

    // The lanes appear: wave 1 enrolled with live panes, the rest pending.
    let screen = await waitForScreen(/^lanes · demo {2}batch\/demo {2}running/m, 60_000);
    expect(screen).toMatch(/^[› ] index +pending/m);
    screen = await waitForScreen(/│add: wrote src\/add\.mjs/, 60_000);
    expect(screen).toMatch(/^› add +(enrolled|integrated|released)/m);
    // The grid: each lane with a pane, side by side.
    await sendKey('g');
    screen = await waitForScreen(/╮╭[\s\S]*│sub: wrote src\/sub\.mjs/, 30_000);
    await sendKey('g');
    await waitForScreen(/^(?![\s\S]*╮╭)/, 10_000);

    // index asks for a word and shows as waiting: select it, attach, answer, detach.
    await waitForScreen(/^[› ] index +enrolled +waiting/m, 180_000);
    await selectLane('index', 'j');
    await sendKey('Enter');
    await waitForScreen(/│index · attached \(ctrl-g detaches\)/, 10_000);
    await sendText('hello lanes');
    screen = await waitForScreen(/changelog\? \(20 s\) hello lanes/, 10_000);
    expect(screen).toMatch(/│index · attached/);
    await sendKey('Enter');
    await waitForScreen(/│index: got: hello lanes/, 15_000);
    await sendKey('C-g');
    await waitForScreen(/│index +│/, 10_000);

    // sqrt keeps failing QA and parks; the batch stops for a human.
    screen = await waitForScreen(
      /^lanes · demo {2}batch\/demo {2}needs_human[\s\S]*7\/8 integrated[\s\S]*^[› ] sqrt +needs_human/m,
      120_000,
    );
    expect(screen).toMatch(/^[› ] index +(integrated|released)/m);
    await selectLane('sqrt', 'k');
    screen = await waitForScreen(/^› sqrt +needs_human[^\n]*\n {3}\S/m, 10_000);
    expect(screen).toMatch(/ r resume {2}R retry /);

    // The human fixes sqrt in its lane and resumes: the batch completes.
    writeFileSync(join(dir, 'calc.lanes', 'demo', 'sqrt', 'src', 'sqrt.mjs'), SQRT_FIX);
    await sendKey('r');
    screen = await waitForScreen(/^lanes · demo {2}batch\/demo {2}completed[^\n]* 8\/8 integrated/m, 120_000);
    screen = await waitForScreen(/^[› ] sqrt +released/m, 30_000);
    for (const id of ['add', 'sub', 'mul', 'pow', 'div', 'mean', 'sqrt', 'index'])
      expect(screen).toMatch(new RegExp(`^[› ] ${id} +released`, 'm'));

    // Over all the captures: add and index were seen in flight, then released; sqrt parked.
    for (const id of ['add', 'index']) {
      const states = seen.get(id) ?? [];
      expect(states.indexOf('enrolled')).toBeGreaterThanOrEqual(0);
      expect(states.indexOf('released')).toBeGreaterThan(states.indexOf('enrolled'));
    }
    expect(seen.get('sqrt')).toContain('needs_human');

    await sendKey('q');
    screen = await waitForScreen(/^EXIT=\d+$/m, 30_000);
    expect(screen).toMatch(/^EXIT=0$/m);
  }, 300_000);
});
