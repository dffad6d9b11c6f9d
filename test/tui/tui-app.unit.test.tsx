import { cleanup, render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { App } from '../../components/App.js';
import type { LaneRow } from '../../src/tui/tui-store.js';
import {
  FakeSession,
  FakeStore,
  KEY,
  plain,
  recordingActions,
  resize,
  row,
  settled,
  snapshot,
  waitFor,
  waitForFrame,
} from '../helpers/tui.js';

// The TUI root (DESIGN §10) driven through real keystrokes on ink-testing-library's stdin:
// a fake store supplies the snapshot and the lane sessions, recording actions stand in for
// the coordinator. Every key is one stdin.write, and each step waits for the frame.

afterEach(() => cleanup());

const NOW = Date.now();
const WAITING = { waiting: true, stalled: false, drift: [] };
const STALLED = { waiting: false, stalled: true, drift: [] };
const DRIFT = { waiting: false, stalled: false, drift: ['README.md'] };

/** A demo-like batch in the middle of its run. */
function demoRows(): LaneRow[] {
  return [
    row('add', { state: 'released', attempt: 1, startedAt: NOW - 30_000, endedAt: NOW - 20_000 }),
    row('div', { state: 'enrolled', attempt: 2, qaFailures: 1, startedAt: NOW - 5_000, running: true }),
    row('mean', { state: 'enrolled', attempt: 1, startedAt: NOW - 4_000, health: WAITING, running: true }),
    row('pow', { state: 'enrolled', attempt: 1, startedAt: NOW - 3_000, health: STALLED }),
    row('sub', { state: 'enrolled', attempt: 1, startedAt: NOW - 2_000, health: DRIFT }),
    row('sqrt', { state: 'needs_human', attempt: 2, qaFailures: 2, reason: 'QA failure limit reached' }),
    row('mul', { state: 'settled', attempt: 1, reviewPending: true }),
    row('index', { state: 'pending' }),
  ];
}

function demoStore(patch: Parameters<typeof snapshot>[1] = {}): FakeStore {
  return new FakeStore(
    snapshot(demoRows(), { wave: 2, waves: 4, integrated: 2, startedAt: NOW - 65_000, ...patch }),
  );
}

type Ui = ReturnType<typeof render>;

/** Renders and waits for the first frame with `until` and for the input handlers to be live. */
async function mount(tree: Parameters<typeof render>[0], until: string | RegExp): Promise<Ui> {
  const ui = render(tree);
  await waitForFrame(ui.lastFrame, until);
  await settled();
  return ui;
}

/** One key, then the frame that shows its effect (and the handlers of that frame are live). */
async function press(
  ui: Ui,
  key: string,
  until: string | RegExp | ((f: string) => boolean),
): Promise<string> {
  ui.stdin.write(key);
  const frame = await waitForFrame(ui.lastFrame, until);
  await settled();
  return frame;
}

/** Selects a lane with j, one key per write, waiting for each move. */
async function select(ui: Ui, rows: LaneRow[], taskId: string): Promise<void> {
  const target = rows.findIndex((r) => r.taskId === taskId);
  let at = rows.findIndex((r) => new RegExp(`› ${r.taskId} `).test(plain(ui.lastFrame())));
  while (at < target) {
    at++;
    await press(ui, 'j', `› ${rows[at]!.taskId} `);
  }
}

const laneLine = (frame: string, taskId: string) =>
  frame.split('\n').find((l) => new RegExp(`^[› ] ${taskId} `).test(l)) ?? '';

describe('the dashboard', () => {
  it('shows the header: batch, branch, state, wave, progress bar and elapsed time', async () => {
    const ui = await mount(<App store={demoStore()} actions={recordingActions()} />, 'integrated');
    const header = plain(ui.lastFrame()).split('\n')[0]!;
    expect(header).toMatch(/^lanes · demo {2}batch\/demo {2}running {2}wave 2\/4 {2}/);
    // 2 of 8 integrated: a quarter of the 20-cell bar is filled.
    expect(header).toContain(`${'█'.repeat(5)}${'░'.repeat(15)} 2/8 integrated`);
    expect(header).toMatch(/integrated {2}1m0[5-9]s/);
    expect(header).not.toContain('dispatch paused');
  });

  it('lists every child with state, attempt, QA failures, elapsed and health tags', async () => {
    const ui = await mount(<App store={demoStore()} actions={recordingActions()} />, 'index');
    const frame = plain(ui.lastFrame());
    expect(laneLine(frame, 'add')).toMatch(/^› add +released +#1 10s/);
    expect(laneLine(frame, 'div')).toMatch(/^ {2}div +enrolled +#2 qa✗1 [5-9]s/);
    expect(laneLine(frame, 'mean')).toMatch(/enrolled +waiting #1 \d+s/);
    expect(laneLine(frame, 'pow')).toMatch(/enrolled +stalled #1 \d+s/);
    expect(laneLine(frame, 'sub')).toMatch(/enrolled +scope drift #1 \d+s/);
    expect(laneLine(frame, 'sqrt')).toMatch(/needs_human +#2 qa✗2/);
    expect(laneLine(frame, 'mul')).toMatch(/settled +review #1/);
    expect(laneLine(frame, 'index')).toMatch(/^ {2}index pending *│/);
    // The reason is shown under the selected lane only.
    expect(frame).not.toContain('QA failure limit reached');
  });

  it('shows the reason of the selected lane', async () => {
    const store = demoStore();
    const ui = await mount(<App store={store} actions={recordingActions()} />, 'index');
    await select(ui, demoRows(), 'sqrt');
    const lines = plain(ui.lastFrame()).split('\n');
    const at = lines.findIndex((l) => l.startsWith('› sqrt'));
    expect(lines[at + 1]).toMatch(/^ {3}QA failure limit reached/);
  });

  it('selects with j/k and the arrows, and stops at both ends', async () => {
    const actions = recordingActions();
    const ui = await mount(<App store={demoStore()} actions={actions} />, '› add');
    await press(ui, 'j', '› div');
    await press(ui, KEY.DOWN, '› mean');
    await press(ui, 'k', '› div');
    await press(ui, KEY.UP, '› add');
    ui.stdin.write('k');
    ui.stdin.write(KEY.UP);
    await press(ui, 'j', '› div'); // k and up at the top kept `add`, so one j reaches div
    for (const id of ['mean', 'pow', 'sub', 'sqrt', 'mul', 'index']) await press(ui, 'j', `› ${id} `);
    ui.stdin.write('j');
    await press(ui, 'k', '› mul');
    expect(actions.calls).toEqual([]);
  });

  it("renders the selected lane's live terminal from its screen model", async () => {
    const store = demoStore();
    const div = new FakeSession('div');
    await div.print('\x1b[1mdiv: Add div(a, b)\x1b[0m\r\n\x1b[31mFAIL\x1b[0m test/div.test.mjs\r\n$ ');
    store.sessions.set('div', div);
    const ui = await mount(<App store={store} actions={recordingActions()} />, '› add');
    expect(plain(ui.lastFrame())).toContain('no executor running in this lane');
    const frame = await press(ui, 'j', 'FAIL test/div.test.mjs');
    const pane = frame.split('\n').map((l) => l.slice(45));
    expect(pane[1]).toMatch(/^╭─+╮$/);
    expect(pane[2]).toMatch(/^│div +│$/);
    expect(pane[3]).toMatch(/^│div: Add div\(a, b\) +│$/);
    expect(pane[4]).toMatch(/^│FAIL test\/div.test.mjs +│$/);
    expect(pane[5]).toMatch(/^│\$ +│$/);
    expect(store.visible).toEqual(['div']);
  });

  it('shows a grid of up to four panes with g: the selected one, then waiting, running, the rest', async () => {
    const store = demoStore();
    for (const id of ['add', 'div', 'mean', 'pow', 'sub']) {
      const s = new FakeSession(id);
      await s.print(`${id}: output of ${id}\r\n`);
      store.sessions.set(id, s);
    }
    const ui = await mount(<App store={store} actions={recordingActions()} />, 'add: output of add');
    await press(ui, 'j', 'div: output of div');
    const frame = await press(ui, 'g', 'mean: output of mean');
    for (const id of ['add', 'div', 'mean', 'pow']) expect(frame).toContain(`${id}: output of ${id}`);
    expect(frame).not.toContain('sub: output of sub');
    // Two rows of two panes side by side.
    expect(frame.split('\n').filter((l) => /╭─+╮╭─+╮/.test(l))).toHaveLength(2);
    await waitFor(() => store.visible.length === 4);
    expect(store.visible).toEqual(['div', 'mean', 'add', 'pow']); // mean waits for input
    await press(ui, 'g', (f) => !f.includes('add: output of add'));
    await waitFor(() => store.visible.length === 1);
    expect(store.visible).toEqual(['div']);
  });

  it('shows the footer keys that apply to the selected lane and the latest notice', async () => {
    const store = demoStore({ batchState: 'needs_human', notices: ['old notice', 'sqrt needs you'] });
    store.sessions.set('div', new FakeSession('div'));
    const ui = await mount(<App store={store} actions={recordingActions()} />, 'quit');
    const footer = () => plain(ui.lastFrame()).split('\n').slice(-3).join('\n');
    expect(footer()).toContain('sqrt needs you');
    expect(footer()).not.toContain('old notice');
    expect(footer()).toContain(
      'j/k select  g grid  d diff  l QA log  s shell  r resume  R retry  p pause  C cancel  ? keys  q quit',
    );
    await press(ui, 'j', '› div');
    expect(footer()).toContain('j/k select  enter attach  g grid');
    await select(ui, demoRows(), 'mul');
    // Too many for 100 columns: grid, shell and pause give way to the keys of this moment.
    expect(footer()).toContain(
      'j/k select  d diff  l QA log  r resume  R retry  a approve  x reject  C cancel  ? keys  q quit',
    );
    store.update({ batchState: 'running' });
    await waitForFrame(ui.lastFrame, (f) => !f.includes('r resume'));
    expect(footer()).toContain('s shell  a approve  x reject  p pause  ? keys  q quit');
  });

  it('shows every key with ? and closes the help on any key', async () => {
    const actions = recordingActions();
    const ui = await mount(<App store={demoStore()} actions={actions} />, '› add');
    const help = await press(ui, '?', 'any other key closes this help');
    for (const text of [
      'j/k ↓/↑ select the next / previous lane',
      "enter   attach to the lane's pane (ctrl-g detaches)",
      'g       one pane / a grid of up to four',
      "d       the lane's diff",
      "l       the lane's latest QA log",
      's       a shell in the lane',
      'r       resume the parked lanes (a fresh confirmation)', // the help has the whole width
      'R       retry the selected child',
      'a       approve the review of the selected lane',
      'x       reject the review of the selected lane',
      'p       pause / unpause dispatch of new lanes',
      '?       this help (j/k scroll it)',
      'q       quit (asks while in-app executors run)',
      'ctrl-g  detach from a pane (back to these keys)',
    ])
      expect(help).toContain(text);
    // The key that closes the help does nothing else (q does not quit here).
    await press(ui, 'q', (f) => !f.includes('any other key closes'));
    expect(actions.calls).toEqual([]);
  });
});

describe('the layout', () => {
  it('keeps one header row and fits the terminal when it shrinks to 80 columns', async () => {
    const store = demoStore({ paused: true });
    const div = new FakeSession('div');
    await div.print('div: working');
    store.sessions.set('div', div);
    const sizes: [number, number][] = [];
    const actions = {
      ...recordingActions(),
      resize: (cols: number, rows: number) => void sizes.push([cols, rows]),
    };
    const ui = await mount(<App store={store} actions={actions} />, '› add');
    await press(ui, 'j', 'div: working');
    expect(sizes.at(-1)).toEqual([100 - 44 - 1 - 2, 40 - 4 - 3]); // the pane's inside, for the ptys
    resize(ui.stdout, 80, 20);
    const frame = await waitForFrame(ui.lastFrame, (f) => f.split('\n').length <= 19);
    const lines = frame.split('\n');
    // The branch and the bar go; the state, the pause, the wave, the count and the clock stay.
    expect(lines[0]).toMatch(
      /^lanes · demo {2}running {2}dispatch paused {2}wave 2\/4 {2}2\/8 integrated {2}1m0\ds$/,
    );
    // The list narrows to 28 columns (a row gives way word by word, never cut), the pane keeps 51.
    expect(lines[1]).toMatch(/^ {2}add +released +#1 10s +╭─{49}╮$/);
    expect(lines[2]).toMatch(/^› div +enrolled +#2 qa✗1 │div +│$/);
    expect(laneLine(frame, 'sub')).toMatch(/^ {2}sub +enrolled +drift #1 │ +│$/);
    // 19 rows (one is kept free): header, 16 body rows, the footer, and the notice's slot.
    expect(lines).toHaveLength(19);
    expect(lines[16]).toMatch(/^ +╰─+╯$/);
    expect(lines[17]).toMatch(/^j\/k select {2}enter attach/);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    await waitFor(() => sizes.length > 1);
    expect(sizes.at(-1)).toEqual([80 - 28 - 1 - 2, 20 - 4 - 3]);
  });
});

describe('the confirmation screen', () => {
  const LINES = ['batch demo: 8 children in 4 waves from HEAD', '  wave 1: add (script), sub (script)'];

  it('shows the plan and confirms with y', async () => {
    const actions = recordingActions();
    const ui = await mount(<App store={null} actions={actions} confirmLines={LINES} />, 'Start this batch?');
    const frame = plain(ui.lastFrame());
    for (const line of LINES) expect(frame).toContain(line);
    expect(frame).toContain('y start n cancel');
    ui.stdin.write('j'); // not an answer
    ui.stdin.write('y');
    await waitFor(() => actions.calls.length > 0);
    expect(actions.calls).toEqual([['confirm', true]]);
  });

  it('cancels with n', async () => {
    const actions = recordingActions();
    const ui = await mount(<App store={null} actions={actions} confirmLines={LINES} />, 'Start this batch?');
    ui.stdin.write('n');
    await waitFor(() => actions.calls.length > 0);
    expect(actions.calls).toEqual([['confirm', false]]);
  });

  it('shows the dashboard once the store arrives', async () => {
    const actions = recordingActions();
    const ui = await mount(<App store={null} actions={actions} confirmLines={LINES} />, 'Start this batch?');
    ui.rerender(<App store={null} actions={actions} />);
    await waitForFrame(ui.lastFrame, 'starting…');
    ui.rerender(<App store={demoStore()} actions={actions} />);
    await waitForFrame(ui.lastFrame, '› add');
  });
});

describe('attaching to a pane', () => {
  async function attachedToDiv(options: Parameters<typeof recordingActions>[0] = {}) {
    const store = demoStore();
    const div = new FakeSession('div');
    await div.print('div: a word? ');
    store.sessions.set('div', div);
    const actions = recordingActions(options);
    const ui = await mount(<App store={store} actions={actions} />, '› add');
    await press(ui, 'j', '› div');
    await press(ui, KEY.ENTER, 'div · attached (ctrl-g detaches)');
    return { store, div, actions, ui };
  }

  it('forwards keystrokes raw, ctrl keys and a paste included, and detaches with ctrl-g', async () => {
    const { div, actions, ui } = await attachedToDiv();
    const keys = ['x', 'j', 'q', KEY.CTRL_C, '\x01', KEY.UP, 'hello lanes', KEY.ENTER];
    for (const key of keys) ui.stdin.write(key);
    await waitFor(() => div.writes.length === keys.length);
    expect(div.writes).toEqual(keys);
    // q and ctrl-c went to the pane, not to lanes (enter asked whether the lane runs outside)
    expect(actions.calls).toEqual([['focusOutside', 'div']]);
    expect(plain(ui.lastFrame())).toContain('› div'); // and j did not move the selection

    await press(ui, KEY.CTRL_G, (f) => f.includes('› div') && !f.includes('attached'));
    expect(div.writes).not.toContain(KEY.CTRL_G);
    await press(ui, 'j', '› mean'); // the keys are lanes' again
    expect(div.writes).toHaveLength(keys.length);
  });

  it('detaches when the executor exits', async () => {
    const { store, div, ui } = await attachedToDiv();
    div.end(0);
    store.update({});
    await waitForFrame(ui.lastFrame, (f) => f.includes('│div ') && !f.includes('attached'));
    await settled();
    await press(ui, 'j', '› mean');
  });

  it('ignores ctrl keys when not attached: a late ctrl-g does not toggle the grid', async () => {
    const store = demoStore();
    for (const id of ['add', 'div']) {
      const s = new FakeSession(id);
      await s.print(`${id}: output of ${id}\r\n`);
      store.sessions.set(id, s);
    }
    const actions = recordingActions();
    const ui = await mount(<App store={store} actions={actions} />, 'add: output of add');
    await select(ui, demoRows(), 'mul');
    for (const key of [KEY.CTRL_G, '\x01', '\x18', '\x12', '\x10', '\x04']) ui.stdin.write(key); // ^G ^A ^X ^R ^P ^D
    await press(ui, 'k', '› sqrt');
    expect(actions.calls).toEqual([]);
    expect(plain(ui.lastFrame())).not.toContain('output of'); // still one pane: sqrt has none
  });

  it('does not attach to a lane without a running executor', async () => {
    const store = demoStore();
    const div = new FakeSession('div');
    div.end(1);
    store.sessions.set('div', div);
    const ui = await mount(<App store={store} actions={recordingActions()} />, '› add');
    ui.stdin.write(KEY.ENTER); // add has no session at all
    await press(ui, 'j', '› div');
    ui.stdin.write(KEY.ENTER);
    await press(ui, 'j', '› mean');
    expect(plain(ui.lastFrame())).not.toContain('attached');
  });

  it('focuses a lane that runs outside the app instead of attaching', async () => {
    const store = demoStore();
    store.sessions.set('div', new FakeSession('div'));
    const actions = recordingActions({ focusOutside: true });
    const ui = await mount(<App store={store} actions={actions} />, '› add');
    await press(ui, 'j', '› div');
    ui.stdin.write(KEY.ENTER);
    await waitFor(() => actions.calls.length > 0);
    expect(actions.calls).toEqual([['focusOutside', 'div']]);
    await press(ui, 'j', '› mean');
    expect(plain(ui.lastFrame())).not.toContain('attached');
  });
});

const DIFF = [
  'diff --git a/src/div.mjs b/src/div.mjs',
  'index 0000000..1111111 100644',
  '--- a/src/div.mjs',
  '+++ b/src/div.mjs',
  '@@ -1 +1,4 @@',
  '-export const div = (a, b) => a * b;',
  '+export const div = (a, b) => {',
  ...Array.from({ length: 43 }, (_, i) => `+  // line ${i + 1}`),
].join('\n');

describe('the diff and the QA log', () => {
  it('opens the diff with d, scrolls with j/k/space and closes with q', async () => {
    const actions = recordingActions({ diff: DIFF });
    const ui = await mount(<App store={demoStore()} actions={actions} />, '› add');
    await press(ui, 'j', '› div');
    // 50 lines; the viewer shows 33 (the body is 36 rows, less the border and title).
    let frame = await press(ui, 'd', 'diff of div (1-33 of 50)');
    expect(actions.calls).toEqual([['diff', 'div']]);
    expect(frame).toContain('diff --git a/src/div.mjs b/src/div.mjs');
    expect(frame).toContain('+  // line 26');
    expect(frame).not.toContain('+  // line 27');
    frame = await press(ui, 'j', '(2-34 of 50)');
    expect(frame).not.toContain('diff --git');
    frame = await press(ui, ' ', '(18-50 of 50)');
    expect(frame).toContain('+  // line 43');
    await press(ui, 'k', '(17-49 of 50)');
    // The viewer has the keys: j scrolled, it did not select the next lane.
    expect(plain(ui.lastFrame())).toContain('› div');
    frame = await press(ui, 'q', (f) => !f.includes('diff of div'));
    expect(frame).toContain('│div ');
    expect(actions.named('quit')).toEqual([]);
  });

  it('opens the QA log with l', async () => {
    const log = 'QA run 2 at 2026-11-29T10:00:00Z: failed\n\n── test: exit 1 in 120 ms ──\nnot ok 1 - sqrt';
    const actions = recordingActions({ qaLog: log });
    const ui = await mount(<App store={demoStore()} actions={actions} />, '› add');
    await select(ui, demoRows(), 'sqrt');
    const frame = await press(ui, 'l', 'QA log of sqrt (1-4 of 4)');
    expect(actions.calls).toEqual([['qaLog', 'sqrt']]);
    expect(frame).toContain('── test: exit 1 in 120 ms ──');
    expect(frame).toContain('not ok 1 - sqrt');
    await press(ui, KEY.ESC, (f) => !f.includes('QA log of sqrt'));
  });
});

describe('the action keys', () => {
  it('opens a shell in the lane with s and attaches to it', async () => {
    const store = demoStore();
    const shell = new FakeSession('sqrt');
    await shell.print('$ ');
    const actions = recordingActions({ onShell: (task) => store.shells.set(task, shell) });
    const ui = await mount(<App store={store} actions={actions} />, '› add');
    await select(ui, demoRows(), 'sqrt');
    await press(ui, 's', 'sqrt · attached (ctrl-g detaches)');
    expect(actions.calls).toEqual([['openShell', 'sqrt']]);
    ui.stdin.write('ls');
    ui.stdin.write(KEY.ENTER);
    await waitFor(() => shell.writes.length === 2);
    expect(shell.writes).toEqual(['ls', KEY.ENTER]);
    await press(ui, KEY.CTRL_G, (f) => !f.includes('attached'));
  });

  it('resumes with r and retries the selected child with R', async () => {
    const actions = recordingActions();
    const ui = await mount(
      <App store={demoStore({ batchState: 'needs_human' })} actions={actions} />,
      '› add',
    );
    await select(ui, demoRows(), 'sqrt');
    ui.stdin.write('r');
    ui.stdin.write('R');
    await waitFor(() => actions.calls.length === 2);
    expect(actions.calls).toEqual([['resume'], ['retry', 'sqrt']]);
  });

  it('approves and rejects a review with a and x, only when one is pending', async () => {
    const actions = recordingActions();
    const ui = await mount(<App store={demoStore()} actions={actions} />, '› add');
    ui.stdin.write('a');
    ui.stdin.write('x');
    await press(ui, 'j', '› div'); // a and x on add (no review pending) were ignored
    expect(actions.calls).toEqual([]);
    await select(ui, demoRows(), 'mul');
    ui.stdin.write('a');
    ui.stdin.write('x');
    await waitFor(() => actions.calls.length === 2);
    expect(actions.calls).toEqual([
      ['review', 'mul', 'approved'],
      ['review', 'mul', 'rejected'],
    ]);
  });

  it('pauses dispatch with p', async () => {
    const store = demoStore();
    const actions = recordingActions();
    const ui = await mount(<App store={store} actions={actions} />, '› add');
    ui.stdin.write('p');
    await waitFor(() => actions.calls.length === 1);
    expect(actions.calls).toEqual([['togglePause']]);
    store.update({ paused: true, pauseReason: 'user' });
    await waitForFrame(ui.lastFrame, 'dispatch paused');
  });

  it('D asks before dropping the selected child: n keeps it, y drops it', async () => {
    const actions = recordingActions();
    const ui = await mount(
      <App store={demoStore({ batchState: 'needs_human' })} actions={actions} />,
      '› add',
    );
    await press(ui, 'D', (f) => f.includes('› add')); // released: nothing to drop, no question
    await select(ui, demoRows(), 'sqrt');
    expect(plain(ui.lastFrame())).toContain('D drop');
    expect(plain(ui.lastFrame())).toContain('fix the lane, then r'); // the ways on, under its reason
    const prompt = await press(ui, 'D', 'Drop? y/n');
    expect(prompt).toContain('Drop sqrt and every child that depends on it?');
    await press(ui, 'n', (f) => !f.includes('Drop?'));
    expect(actions.calls).toEqual([]);
    await press(ui, 'D', 'Drop? y/n');
    ui.stdin.write('y');
    await waitFor(() => actions.calls.length === 1);
    expect(actions.calls).toEqual([['drop', 'sqrt']]);
  });

  it('C asks before cancelling the batch; nothing is asked once it has ended', async () => {
    const actions = recordingActions();
    const store = demoStore({ batchState: 'needs_human' });
    const ui = await mount(<App store={store} actions={actions} />, '› add');
    const prompt = await press(ui, 'C', 'Cancel the batch? y/n');
    expect(prompt).toContain('It ends cancelled');
    ui.stdin.write('y');
    await waitFor(() => actions.calls.length === 1);
    expect(actions.calls).toEqual([['cancel']]);
    store.update({ batchState: 'cancelled' });
    await waitForFrame(ui.lastFrame, (f) => !f.includes('C cancel'));
    await press(ui, 'C', (f) => !f.includes('Cancel the batch?'));
    expect(actions.calls).toEqual([['cancel']]);
  });

  it('quits with q at once when no executor runs in the app', async () => {
    const actions = recordingActions({ running: 0 });
    const ui = await mount(<App store={demoStore()} actions={actions} />, '› add');
    ui.stdin.write('q');
    await waitFor(() => actions.calls.length === 1);
    expect(actions.calls).toEqual([['quit']]);
  });

  it('asks before quitting while executors run in the app: n returns, y quits', async () => {
    const actions = recordingActions({ running: 2 });
    const ui = await mount(<App store={demoStore()} actions={actions} />, '› add');
    const prompt = await press(ui, 'q', 'Quit? y/n');
    expect(prompt).toContain('2 executors still run in this window and will be');
    expect(prompt).toContain('Their lanes keep the work so far; lanes resume');
    await press(ui, 'n', (f) => !f.includes('Quit?'));
    await press(ui, 'j', '› div'); // the dashboard has the keys again
    expect(actions.calls).toEqual([]);
    await press(ui, 'q', 'Quit? y/n');
    ui.stdin.write('y');
    await waitFor(() => actions.calls.length === 1);
    expect(actions.calls).toEqual([['quit']]);
  });
});
