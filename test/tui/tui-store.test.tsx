import { cleanup, render } from 'ink-testing-library';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { App } from '../../components/App.js';
import { batchPorts } from '../../src/cli/batch-run/batch-ports.js';
import { REDRAW_HZ, TuiStore } from '../../src/tui/tui-store.js';
import { startBatch, writeFiles } from '../helpers/batch.js';
import { makeRepo } from '../helpers/repo.js';
import { FakeSession, plain, recordingActions, settled, waitFor, waitForFrame } from '../helpers/tui.js';

// The real TUI store over a real batch in a temporary git repository: the test plays the
// steward and the executors (as in the tick tests) and hands the store the coordinator's
// events; the app draws what the store makes of the record and the kernel records.

afterEach(() => cleanup());

const check = (id: string, run: string) => `{ id: ${id}, run: ${JSON.stringify(run)} }`;
const PLAN = `
batch: tui
max_parallel: 2
children:
  - { id: A, goal: Write a, scope: ["a/**"], acceptance: [${check('ok', 'test -f a/out.txt')}] }
  - { id: B, goal: Write b, scope: ["b/**"], acceptance: [${check('ok', 'test -f b/out.txt')}] }
  - { id: C, goal: Write c, blocked_by: [A], scope: ["c/**"], acceptance: [${check('ok', 'test -f c/out.txt')}] }
`;

/** The lane list's row of a child (the pane area to its right cut off). */
const lane = (frame: string, id: string) =>
  (frame.split('\n').find((l) => new RegExp(`^[› ] ${id} `).test(l)) ?? '').slice(0, 44).trimEnd();

describe('the TUI store over a real batch', () => {
  it('shows the record, the kernel attempts, sessions, health, reports and notices', async () => {
    const d = await startBatch(await makeRepo(), PLAN);
    await d.provisionAll(await d.tick());
    const store = new TuiStore(batchPorts(d.repo, 'tui').store, d.plan);
    const ui = render(<App store={store} actions={recordingActions()} />);
    let frame = await waitForFrame(ui.lastFrame, /› A /);
    await settled();
    expect(frame.split('\n')[0]).toMatch(
      /^lanes · tui {2}batch\/tui {2}running {2}wave 1\/2 {2}░{20} 0\/3 integrated/,
    );
    // No attempt yet: the executor runner records it when it launches.
    expect(lane(frame, 'A')).toMatch(/^› A +enrolled$/);
    expect(lane(frame, 'B')).toMatch(/^ {2}B +enrolled$/);
    expect(lane(frame, 'C')).toMatch(/^ {2}C +pending$/);

    // The coordinator launched A's executor: its pane is on screen, and its output redraws.
    const a = new FakeSession('A');
    store.onEvent({ kind: 'launched', task: 'A', attempt: 1, session: a });
    await waitForFrame(ui.lastFrame, 'enter attach');
    await waitFor(() => plain(ui.lastFrame()).includes('│A '));
    await a.print('A: writing a/out.txt\r\n');
    await waitForFrame(ui.lastFrame, 'A: writing a/out.txt');

    // B waits for input; then B strays out of its scope.
    store.onEvent({
      kind: 'health',
      task: 'B',
      what: 'waiting',
      health: { waiting: true, stalled: false, drift: [] },
    });
    frame = await waitForFrame(ui.lastFrame, 'waiting');
    expect(lane(frame, 'B')).toMatch(/enrolled +waiting$/);
    store.onEvent({
      kind: 'health',
      task: 'B',
      what: 'drift',
      health: { waiting: false, stalled: false, drift: ['README.md'] },
    });
    frame = await waitForFrame(ui.lastFrame, 'scope drift');
    expect(lane(frame, 'B')).not.toContain('waiting');

    // A's executor exits having written its file: the tick integrates it.
    writeFiles(d.lanePath('A'), { 'a/out.txt': 'a\n' });
    a.end(0);
    store.onEvent({ kind: 'exited', task: 'A', code: 0, signal: null });
    const report = await d.tick({ exited: [{ task_id: 'A', code: 0, signal: null }] });
    store.onEvent({ kind: 'report', report });
    frame = await waitForFrame(ui.lastFrame, '1/3 integrated');
    expect(lane(frame, 'A')).toMatch(/^› A +integrated +#1 \d+s$/);
    expect(frame.split('\n')[0]).toMatch(/wave 1\/2 {2}█{7}░{13} 1\/3 integrated/);

    store.onEvent({ kind: 'notice', text: 'B: scope drift (README.md)' });
    frame = await waitForFrame(ui.lastFrame, 'B: scope drift (README.md)');
    expect(frame.split('\n').at(-2)).toBe('B: scope drift (README.md)');
    store.dispose();
  });

  it('redraws for the output of panes on screen only, at most REDRAW_HZ times a second', async () => {
    const d = await startBatch(await makeRepo(), PLAN);
    await d.provisionAll(await d.tick());
    const files = batchPorts(d.repo, 'tui').store;
    vi.useFakeTimers(); // the throttle's interval, not the test, decides when a redraw happens
    try {
      const store = new TuiStore(files, d.plan);
      const a = new FakeSession('A');
      const b = new FakeSession('B');
      let redraws = 0;
      store.subscribe(() => redraws++);
      store.onEvent({ kind: 'launched', task: 'A', attempt: 1, session: a });
      store.onEvent({ kind: 'launched', task: 'B', attempt: 1, session: b });
      vi.advanceTimersByTime(INTERVAL);
      expect(redraws).toBe(1); // the constructor's rows and both launches, in one redraw
      store.setVisible(['A']);
      b.emit('hidden output');
      vi.advanceTimersByTime(10 * INTERVAL);
      expect(redraws).toBe(1);
      for (let i = 0; i < 50; i++) a.emit(`visible output ${i}\r\n`);
      vi.advanceTimersByTime(INTERVAL);
      expect(redraws).toBe(2);
      vi.advanceTimersByTime(10 * INTERVAL);
      expect(redraws).toBe(2);
      store.dispose();
    } finally {
      vi.useRealTimers();
    }
  });
});

const INTERVAL = 1000 / REDRAW_HZ;
