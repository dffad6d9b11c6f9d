import { cleanup, render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { App } from '../../components/App.js';
import { Header } from '../../components/Header.js';
import { LaneList, laneListWidth } from '../../components/LaneList.js';
import {
  FakeStore,
  plain,
  recordingActions,
  resize,
  row,
  settled,
  snapshot,
  waitForFrame,
} from '../helpers/tui.js';

// The lane list of a batch with machines (docs/DECISIONS.md, "Machines: placement"): each
// lane's machine after its state, cut to 8 columns so that the list keeps to its 28 columns
// at 80; a batch without machines shows none.

afterEach(() => cleanup());

const rows = () => [
  row('add', { state: 'enrolled', attempt: 1, machine: 'box-a' }),
  row('div', { state: 'enrolled', attempt: 1, machine: 'local' }),
  row('pow', {
    state: 'enrolled',
    attempt: 2,
    machine: 'build-server-7',
    health: { waiting: false, stalled: true, drift: [] },
  }),
  row('sqrt', { state: 'needs_human', attempt: 1, machine: 'box-b', reason: 'machine_lost: box-b' }),
  row('index', { state: 'pending' }),
];

describe('the lane list with machines', () => {
  it("shows each lane's machine, in the list's 28 columns at 80", async () => {
    const width = laneListWidth(80);
    const ui = render(<LaneList rows={rows()} selected={3} now={0} width={width} height={20} />);
    const frame = plain(await waitForFrame(ui.lastFrame, 'index'));
    const lines = frame.split('\n');
    // (28 columns: the machine cut to what is left beside the attempt)
    expect(lines[0]).toMatch(/^ {2}add +enrolled +@box +#1/);
    expect(lines[1]).toMatch(/^ {2}div +enrolled +@loc +#1/);
    // (the tag and the machine leave no room for the state's long word: it gives its short one)
    expect(lines[2]).toMatch(/^ {2}pow +enrol stalled @bui$/);
    expect(lines[3]).toMatch(/^› sqrt +needs_human +@box +#1/);
    expect(frame).toContain('machine_lost: box-b');
    // the selected lane's machine, whole, below it
    expect(frame).toContain('on box-b');
    expect(lines.find((l) => l.includes('index'))).not.toContain('@');
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(width);
  });

  it('a wider list (96 columns and up) shows up to 8 columns of the machine', async () => {
    const ui = render(<LaneList rows={rows()} selected={2} now={0} width={laneListWidth(120)} height={20} />);
    const lines = plain(await waitForFrame(ui.lastFrame, 'index')).split('\n');
    expect(lines[0]).toMatch(/^ {2}add +enrolled +@box-a +#1/);
    expect(lines[2]).toMatch(/^› pow +enrolled +stalled @build-se #2/);
    expect(lines.join('\n')).toContain('on build-server-7');
  });

  it('without machines: no machine column (the rows as before)', async () => {
    const plainRows = rows().map(({ machine: _m, ...r }) => r);
    const ui = render(<LaneList rows={plainRows} selected={0} now={0} width={28} height={20} />);
    const frame = plain(await waitForFrame(ui.lastFrame, 'index'));
    expect(frame).not.toContain('@');
    expect(frame.split('\n')[0]).toMatch(/^› add +enrolled +#1/);
  });

  it('the whole screen at 80x24 keeps to 80 columns with the machines shown', async () => {
    const store = new FakeStore(
      snapshot(rows(), { batchState: 'running', batchId: 'b1', branch: 'batch/b1' }),
    );
    const ui = render(<App store={store} actions={recordingActions()} />);
    resize(ui.stdout as unknown as NodeJS.EventEmitter, 80, 24);
    await settled();
    const frame = plain(await waitForFrame(ui.lastFrame, 'on box-a'));
    expect(frame).toMatch(/add +enrolled +@box/);
    for (const line of frame.split('\n')) expect([...line].length).toBeLessThanOrEqual(80);
    expect(frame.split('\n').length).toBeLessThanOrEqual(24);
  });

  it('the header names a machine that does not answer, at 80 columns too', async () => {
    const away = snapshot(rows(), {
      machinesAway: [
        { name: 'box-a', state: 'reconnecting' },
        { name: 'box-b', state: 'lost' },
      ],
    });
    const ui = render(<Header snapshot={away} now={Date.now()} width={80} />);
    const frame = plain(await waitForFrame(ui.lastFrame, 'box-b lost'));
    expect(frame).toContain('box-a reconnecting');
    expect(frame.split('\n')).toHaveLength(1);
  });
});
