import { describe, expect, it } from 'vitest';
import { batchPorts } from '../../src/cli/batch-run/batch-ports.js';
import { TuiStore } from '../../src/tui/tui-store.js';
import { startBatch } from '../helpers/batch.js';
import { makeRepo } from '../helpers/repo.js';
import { FakeSession } from '../helpers/tui.js';

// A frame of a busy pane costs tens of milliseconds on the thread that reads the ptys; at a
// fixed 20 Hz those frames took most of it while a lane streamed (issue 28). The store
// waits longer after a costly frame: here every frame costs 40 ms, and the redraws of a
// pane streaming output come at least 150 ms apart (src/tui/redraw-pace.ts: 6x the cost).

const PLAN = `
batch: pace
max_parallel: 1
children:
  - { id: A, goal: Write a, scope: ["a/**"], acceptance: [{ id: ok, run: "true" }] }
`;

const busy = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

describe('redraws while a pane streams', () => {
  it('come further apart when frames are costly', async () => {
    const d = await startBatch(await makeRepo(), PLAN);
    await d.provisionAll(await d.tick());
    const store = new TuiStore(batchPorts(d.repo, 'pace').store, d.plan);
    const a = new FakeSession('A');
    const frames: number[] = [];
    store.subscribe(() => {
      frames.push(performance.now());
      busy(40);
    });
    store.onEvent({ kind: 'launched', task: 'A', attempt: 1, session: a });
    store.setVisible(['A']);
    const until = performance.now() + 1500;
    while (performance.now() < until) {
      a.emit('output\r\n');
      await new Promise((r) => setTimeout(r, 5));
    }
    store.dispose();
    const gaps = frames.slice(2).map((t, i) => t - frames[i + 1]!);
    expect(gaps.length).toBeGreaterThan(2);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(150);
  });
});
