import { cleanup, render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { App } from '../../components/App.js';
import type { Host } from '../../src/hosts/host.js';
import { PtyHost } from '../../src/hosts/pty/pty-host.js';
import type { PtySession } from '../../src/hosts/pty/pty-host.js';
import { gridSizes, innerSize, paneLayout, resizeSessions, windowStart } from '../../src/tui/pane-layout.js';
import type { LaneRow } from '../../src/tui/tui-store.js';
import { tempDir } from '../helpers/repo.js';
import {
  FakeSession,
  FakeStore,
  plain,
  recordingActions,
  row,
  settled,
  snapshot,
  waitForFrame,
} from '../helpers/tui.js';
import { join } from 'node:path';

// The grid of four (g): each pane's terminal is resized to its own cell — the pty (the
// program sees SIGWINCH and the new `stty size`) and the screen model — and a cell whose
// screen is taller than it shows the rows around the cursor. Leaving the grid gives the
// panes their full size back.

afterEach(() => cleanup());
const hosts: Host[] = [];
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.dispose()));
});

describe('the layout rules', () => {
  it('puts one pane over the whole area, and up to four two a row', () => {
    expect(paneLayout(['a'], 55, 36)).toEqual([[{ task: 'a', width: 55, height: 36 }]]);
    expect(paneLayout(['a', 'b', 'c'], 55, 36)).toEqual([
      [
        { task: 'a', width: 27, height: 18 },
        { task: 'b', width: 27, height: 18 },
      ],
      [{ task: 'c', width: 27, height: 18 }],
    ]);
    expect(innerSize(27, 18)).toEqual({ cols: 25, rows: 15 });
    expect(gridSizes(['a'], 55, 36)).toEqual({});
    expect(gridSizes(['a', 'b'], 55, 36)).toEqual({ a: { cols: 25, rows: 33 }, b: { cols: 25, rows: 33 } });
  });

  it('keeps the cursor row in view, with what is drawn below it as far as it fits', () => {
    expect(windowStart(12, 15, 11, 11)).toBe(0); // the screen fits
    expect(windowStart(30, 10, 27, 29)).toBe(20); // input box at the bottom: the last ten rows
    expect(windowStart(30, 10, 5, 29)).toBe(0); // the cursor near the top: the top rows
    expect(windowStart(30, 10, 15, 29)).toBe(15); // below the cursor only as much as fits
    expect(windowStart(30, 10, 15, 15)).toBe(6); // nothing below: the cursor on the last row
  });

  it('resizes a session only when its size changes (a resize is a SIGWINCH)', () => {
    const sizes: string[] = [];
    class Counting extends FakeSession {
      override resize(cols: number, rows: number): void {
        sizes.push(`${this.taskId} ${cols}x${rows}`);
        super.resize(cols, rows);
      }
    }
    const a = new Counting('a', 53, 33);
    const b = new Counting('b', 53, 33);
    resizeSessions(
      [
        ['a', a],
        ['b', b],
      ],
      { cols: 53, rows: 33 },
      { a: { cols: 25, rows: 15 } },
    );
    resizeSessions(
      [
        ['a', a],
        ['b', b],
      ],
      { cols: 53, rows: 33 },
      { a: { cols: 25, rows: 15 } },
    );
    resizeSessions(
      [
        ['a', a],
        ['b', b],
      ],
      { cols: 53, rows: 33 },
    );
    expect(sizes).toEqual(['a 25x15', 'a 53x33']);
  });
});

/** Rows of a batch whose lanes div, mean and pow have panes. */
const ROWS: LaneRow[] = [
  row('div', { state: 'enrolled', attempt: 1, running: true }),
  row('mean', { state: 'enrolled', attempt: 1, running: true }),
  row('pow', { state: 'enrolled', attempt: 1, running: true }),
];

type Ui = ReturnType<typeof render>;
async function press(ui: Ui, key: string, until: (frame: string) => boolean): Promise<string> {
  ui.stdin.write(key);
  const frame = await waitForFrame(ui.lastFrame, until, { timeoutMs: 8000 });
  await settled();
  return frame;
}

const count = (frame: string, text: string) => frame.split(text).length - 1;

// An agent-like program: on start and on every SIGWINCH it clears its screen, prints its
// size at the top and draws its input line on the last row, where it leaves the cursor.
const AGENT = [
  'draw() { set -- $(stty size); printf "\\033[2J\\033[Hsize %s %s\\033[%s;1H> input %sx%s" "$1" "$2" "$1" "$2" "$1"; }',
  'trap draw WINCH',
  'draw',
  'while :; do sleep 30 & wait $!; done',
].join('\n');

describe('the grid with real ptys', () => {
  it('sizes each pty to its cell, and the focused one back to full size after the grid', async () => {
    const host = new PtyHost({ cols: 53, rows: 33 });
    hosts.push(host);
    const store = new FakeStore(snapshot(ROWS));
    const dir = tempDir('lanes-grid-');
    for (const task of ['div', 'mean', 'pow'])
      store.sessions.set(
        task,
        await host.open({
          taskId: task,
          runId: 'r1',
          attempt: 1,
          cwd: dir,
          argv: ['sh', '-c', AGENT],
          env: {},
          logPath: join(dir, `${task}.log`),
          statusPath: join(dir, `${task}.status`),
        }),
      );
    const actions = {
      ...recordingActions(),
      resize: (cols: number, rows: number, cells?: Record<string, { cols: number; rows: number }>) =>
        resizeSessions([...store.sessions, ...store.shells], { cols, rows }, cells),
    };
    const ui = render(<App store={store} actions={actions} />);
    // ink-testing-library's terminal: 100 columns; 40 rows (the app's default) → panes 55 x 36.
    await waitForFrame(ui.lastFrame, '> input 53x33', { timeoutMs: 8000 });
    await settled();
    const grid = await press(ui, 'g', (f) => count(f, '> input 25x15') === 3);
    expect(grid).toContain('size 15 25');
    for (const task of ['div', 'mean', 'pow']) {
      const screen = (store.sessions.get(task) as PtySession).screen;
      expect([screen.cols, screen.rows]).toEqual([25, 15]);
    }
    const single = await press(ui, 'g', (f) => f.includes('> input 53x33'));
    expect(single).not.toContain('25x15');
    for (const task of ['div', 'mean', 'pow']) {
      const screen = (store.sessions.get(task) as PtySession).screen;
      expect([screen.cols, screen.rows]).toEqual([53, 33]);
    }
    expect(plain(ui.lastFrame())).toContain('size 33 53');
  }, 30_000);
});

describe('a screen taller than its cell', () => {
  it('shows the rows around the cursor, not the top rows', async () => {
    const store = new FakeStore(snapshot(ROWS));
    for (const task of ['div', 'mean', 'pow']) {
      // 30 rows that do not shrink (recordingActions does not resize): as a host that cannot.
      const s = new FakeSession(task, 40, 30);
      await s.print(
        `TOP of ${task}\x1b[28;1H╭ box ${task}\r\n│ > typed ${task}\r\n╰ status ${task}\x1b[29;12H`,
      );
      store.sessions.set(task, s);
    }
    const ui = render(<App store={store} actions={recordingActions()} />);
    await waitForFrame(ui.lastFrame, 'TOP of div');
    await settled();
    const grid = await press(ui, 'g', (f) => f.includes('> typed pow'));
    for (const task of ['div', 'mean', 'pow']) {
      expect(grid).toContain(`> typed ${task}`);
      expect(grid).toContain(`╰ status ${task}`);
      expect(grid).not.toContain(`TOP of ${task}`);
    }
  });
});
