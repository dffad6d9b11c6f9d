import { cleanup, render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { App } from '../../components/App.js';
import {
  FakeStore,
  plain,
  recordingActions,
  row,
  settled,
  snapshot,
  waitFor,
  waitForFrame,
} from '../helpers/tui.js';

// The completed screen offers `lanes land` on a key (L); elsewhere the key does nothing.

afterEach(() => cleanup());

function mountWith(batchState: 'completed' | 'running') {
  const actions = recordingActions();
  const landed: number[] = [];
  const store = new FakeStore(
    snapshot([row('A', { state: batchState === 'completed' ? 'released' : 'enrolled' })], { batchState }),
  );
  const ui = render(<App store={store} actions={{ ...actions, land: () => void landed.push(1) }} />);
  return { ui, landed };
}

describe('land from the completed screen', () => {
  it('shows "L land" in the footer and lands on L', async () => {
    const { ui, landed } = mountWith('completed');
    const frame = await waitForFrame(ui.lastFrame, 'L land');
    expect(plain(frame)).toContain('L land');
    await settled();
    ui.stdin.write('L');
    await waitFor(() => landed.length === 1);
    expect(landed).toEqual([1]);
  });

  it('offers nothing while the batch runs, and L does not land', async () => {
    const { ui, landed } = mountWith('running');
    const frame = await waitForFrame(ui.lastFrame, 'quit');
    expect(plain(frame)).not.toContain('L land');
    await settled();
    ui.stdin.write('L');
    await settled(10);
    expect(landed).toEqual([]);
  });
});
