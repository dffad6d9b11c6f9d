import { cleanup, render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { App } from '../../components/App.js';
import { BINDINGS } from '../../src/tui/keymap.js';
import { gridTasks } from '../../src/tui/pane-layout.js';
import {
  FakeSession,
  FakeStore,
  plain,
  recordingActions,
  resize,
  row,
  settled,
  snapshot,
  waitForFrame,
} from '../helpers/tui.js';

// The screens at a terminal's default size (80×24) and after a live resize: the header and
// the key bar shorten by priority, the help scrolls, the lane list scrolls to the selection.

afterEach(() => cleanup());

const lines = (frame: string) => frame.split('\n');
const keyBar = (frame: string) =>
  lines(frame)
    .filter((l) => l.trim() !== '')
    .at(-1)!;
const widest = (frame: string) => Math.max(...lines(frame).map((l) => [...l].length));

function parked() {
  const rows = [
    row('add', { state: 'released', attempt: 1, startedAt: Date.now() - 5000, endedAt: Date.now() }),
    row('sqrt', { state: 'needs_human', attempt: 3, qaFailures: 2, reason: 'QA failure limit reached' }),
  ];
  return new FakeStore(
    snapshot(rows, {
      batchState: 'needs_human',
      branch: 'batch/integrate-the-calculator',
      batchId: 'integrate-the-calculator',
      startedAt: Date.now() - 65_000,
    }),
  );
}

async function at(ui: ReturnType<typeof render>, columns: number, rows: number) {
  resize(ui.stdout as unknown as NodeJS.EventEmitter, columns, rows);
  await settled();
}

describe('the screens at 80×24', () => {
  it('keeps the clock and the count in the header and every key that applies in the key bar', async () => {
    const store = parked();
    const ui = render(<App store={store} actions={recordingActions()} />);
    await at(ui, 80, 24);
    await waitForFrame(ui.lastFrame, 'sqrt');
    store.update({ rows: [...store.getSnapshot().rows.slice(0, 1), store.getSnapshot().rows[1]!] });
    const frame = await waitForFrame(ui.lastFrame, (f) => /^›? ?.*sqrt/m.test(f));
    expect(widest(frame)).toBeLessThanOrEqual(80);
    const header = lines(frame)[0]!;
    expect(header).toMatch(/needs_human/);
    expect(header).toMatch(/0\/2 integrated/);
    expect(header).toMatch(/1m0\ds$/); // the clock, at the end
    const bar = keyBar(frame);
    for (const key of ['r resume', 'R retry', 'C cancel', '? keys', 'q quit']) expect(bar).toContain(key);
  });

  it('shows the drop key for a parked lane, and follows a resize to 160 columns and back', async () => {
    const store = parked();
    const ui = render(<App store={store} actions={recordingActions()} />);
    await at(ui, 80, 24);
    ui.stdin.write('j');
    let frame = await waitForFrame(ui.lastFrame, /^› sqrt/m);
    expect(keyBar(frame)).toContain('D drop');
    await at(ui, 160, 48);
    frame = await waitForFrame(ui.lastFrame, /batch\/integrate-the-calculator/);
    expect(keyBar(frame)).toMatch(/j\/k select .* D drop .* q quit/);
    await at(ui, 80, 24);
    frame = await waitForFrame(ui.lastFrame, (f) => !f.includes('batch/integrate'));
    expect(widest(frame)).toBeLessThanOrEqual(80);
    expect(lines(frame).length).toBeLessThanOrEqual(24);
  });

  it('lists every key in the help, scrolls it with j/k, and no line is wider than the terminal', async () => {
    const store = parked();
    const ui = render(<App store={store} actions={recordingActions()} />);
    await at(ui, 80, 24);
    ui.stdin.write('?');
    let frame = await waitForFrame(ui.lastFrame, /keys/);
    const seen = new Set<string>();
    for (let i = 0; i < 40; i++) {
      expect(widest(frame)).toBeLessThanOrEqual(80);
      expect(lines(frame).length).toBeLessThanOrEqual(24);
      for (const l of lines(frame)) seen.add(l);
      if (frame.includes('end · any other key closes')) break;
      ui.stdin.write('j');
      const before = frame;
      frame = await waitForFrame(ui.lastFrame, (f) => f !== before);
    }
    const text = [...seen].join('\n');
    for (const b of BINDINGS)
      if (b.shown) expect(text).toMatch(new RegExp(`│ *${b.shown.replace(/[?/]/g, '\\$&')} `));
    expect(text).toMatch(/│ *s +a shell in the lane/);
    expect(text).toMatch(/│ *ctrl-g +detach/);
    ui.stdin.write('x');
    frame = await waitForFrame(
      ui.lastFrame,
      (f) => !f.includes('any other key closes') && f.includes('sqrt'),
    );
  });
});

describe('many lanes', () => {
  it('scrolls the lane list to keep the selection in view, showing whole runs of lanes', async () => {
    const ids = Array.from({ length: 100 }, (_, i) => `L${String(i + 1).padStart(3, '0')}`);
    const store = new FakeStore(snapshot(ids.map((id) => row(id, { state: 'enrolled' }))));
    const ui = render(<App store={store} actions={recordingActions()} />);
    await at(ui, 160, 48);
    let frame = await waitForFrame(ui.lastFrame, /› L001/);
    const listed = (f: string) =>
      lines(f)
        .map((l) => /^[› ] (L\d{3}) /.exec(l)?.[1])
        .filter((id): id is string => id !== undefined);
    // a whole run from the top
    expect(listed(frame).slice(0, 5)).toEqual(['L001', 'L002', 'L003', 'L004', 'L005']);
    for (let i = 0; i < 60; i++) {
      ui.stdin.write('j');
      await settled(1);
    }
    frame = await waitForFrame(ui.lastFrame, /^› L061 /m);
    const shown = listed(frame);
    const first = ids.indexOf(shown[0]!);
    expect(shown).toEqual(ids.slice(first, first + shown.length)); // consecutive
    expect(shown.length).toBeGreaterThan(30);
  });
});

describe('the grid', () => {
  it('shows the lanes that need the user first (waiting, then running), then the rest', () => {
    const rows = [
      row('a', { state: 'released' }),
      row('b', { state: 'released' }),
      row('c', { state: 'released' }),
      row('d', { state: 'enrolled', running: true }),
      row('e', { state: 'enrolled', running: true, health: { waiting: true, stalled: false, drift: [] } }),
      row('f', { state: 'released' }),
    ];
    const withPane = () => ({});
    expect(gridTasks(rows, undefined, withPane)).toEqual(['e', 'd', 'a', 'b']);
    expect(gridTasks(rows, 'b', withPane)).toEqual(['b', 'e', 'd', 'a']);
  });
});

describe('enter on a lane whose executor exited', () => {
  it('says why it does not attach', async () => {
    const store = new FakeStore(snapshot([row('add', { state: 'released' })]));
    const done = new FakeSession('add');
    done.end(0);
    store.sessions.set('add', done);
    const ui = render(<App store={store} actions={recordingActions()} />);
    await waitForFrame(ui.lastFrame, /› add/);
    await settled();
    ui.stdin.write('\r');
    const frame = await waitForFrame(ui.lastFrame, /add's executor has exited/);
    expect(plain(frame)).not.toContain('attached');
  });
});

describe('the confirmation of a long plan at 80×24', () => {
  it('keeps its keys on the screen and says how many lines are left out', async () => {
    const lines = [
      'batch many: 100 children in 34 waves from HEAD (0123456789ab)',
      ...Array.from(
        { length: 34 },
        (_, i) => `  wave ${i + 1}: L${i * 3 + 1} (script), L${i * 3 + 2} (script)`,
      ),
    ];
    const ui = render(<App store={null} actions={recordingActions()} confirmLines={lines} />);
    await at(ui, 80, 24);
    const frame = await waitForFrame(ui.lastFrame, /more lines/);
    expect(lines.length).toBeGreaterThan(24);
    expect(frame).toMatch(/… \d+ more lines \(lanes plan check <plan> prints them all\)/);
    expect(frame).toMatch(/y start n cancel/);
    expect(frame.split('\n').length).toBeLessThanOrEqual(22);
  });
});
