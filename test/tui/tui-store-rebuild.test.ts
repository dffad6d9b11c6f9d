import { describe, expect, it, vi } from 'vitest';
import { batchPorts } from '../../src/cli/batch-run/batch-ports.js';
import { REDRAW_HZ, TuiStore } from '../../src/tui/tui-store.js';
import { startBatch } from '../helpers/batch.js';
import { makeRepo } from '../helpers/repo.js';

// With 100 lanes, a key pressed while they exited together waited 200-700 ms: every event
// rebuilt the lane rows, each rebuild reading the record and every lane's kernel record
// (many_lanes, issue 28). The rows are rebuilt once a redraw, however many events came.

const PLAN = `
batch: rebuild
max_parallel: 2
children:
  - { id: A, goal: Write a, scope: ["a/**"], acceptance: [{ id: ok, run: "true" }] }
  - { id: B, goal: Write b, scope: ["b/**"], acceptance: [{ id: ok, run: "true" }] }
`;

describe('the lane rows under a burst of events', () => {
  it('are read from the record once a redraw, not once an event', async () => {
    const d = await startBatch(await makeRepo(), PLAN);
    await d.provisionAll(await d.tick());
    const files = batchPorts(d.repo, 'rebuild').store;
    vi.useFakeTimers();
    try {
      const store = new TuiStore(files, d.plan);
      const reads = vi.spyOn(files, 'readRecord');
      let redraws = 0;
      store.subscribe(() => redraws++);
      for (let i = 0; i < 50; i++)
        store.onEvent({ kind: 'exited', task: i % 2 ? 'A' : 'B', code: 0, signal: null });
      vi.advanceTimersByTime(1000 / REDRAW_HZ);
      expect(redraws).toBe(1);
      expect(reads).toHaveBeenCalledTimes(1);
      expect(store.getSnapshot().rows.map((r) => r.taskId)).toEqual(['A', 'B']);
      store.dispose();
    } finally {
      vi.useRealTimers();
    }
  });
});

const MANY = 24;
const MANY_PLAN = `
batch: kernels
max_parallel: ${MANY}
children:
${Array.from({ length: MANY }, (_, i) => `  - { id: L${i}, goal: Write ${i}, scope: ["f${i}/**"], acceptance: [{ id: ok, run: "true" }] }`).join('\n')}
`;

describe('the lane rows of many lanes', () => {
  it('read the kernel record of the lane an event names and a few in turn, not every lane each redraw', async () => {
    const d = await startBatch(await makeRepo(), MANY_PLAN);
    await d.provisionAll(await d.tick());
    const files = batchPorts(d.repo, 'kernels').store;
    vi.useFakeTimers();
    try {
      const store = new TuiStore(files, d.plan);
      expect(store.getSnapshot().rows.filter((r) => r.attempt === 0)).toHaveLength(MANY);
      const reads = vi.spyOn(files, 'readKernel');
      const redraw = () => {
        reads.mockClear();
        store.onEvent({ kind: 'exited', task: 'L5', code: 0, signal: null });
        vi.advanceTimersByTime(1000);
        return reads.mock.calls.map(([task]) => task);
      };
      const first = redraw();
      expect(first).toContain('L5');
      expect(first.length).toBeLessThan(MANY / 2);
      // In turn, every lane's record is read again within a few redraws.
      const seen = new Set(first);
      for (let i = 0; i < 3; i++) for (const task of redraw()) seen.add(task);
      expect(seen.size).toBe(MANY);
      store.dispose();
    } finally {
      vi.useRealTimers();
    }
  });
});

// The lane list renders only the rows whose object changed (components/LaneList.tsx): with
// 100 lanes a frame rendered every row again, each rebuild making every row anew.
describe('a rebuild of the lane rows', () => {
  it('keeps the row objects of lanes whose facts did not change', async () => {
    const d = await startBatch(await makeRepo(), MANY_PLAN);
    await d.provisionAll(await d.tick());
    vi.useFakeTimers();
    try {
      const store = new TuiStore(batchPorts(d.repo, 'kernels').store, d.plan);
      const before = store.getSnapshot().rows;
      store.onEvent({
        kind: 'health',
        task: 'L3',
        what: 'waiting',
        health: { waiting: true, stalled: false, drift: [] },
      });
      vi.advanceTimersByTime(1000);
      const after = store.getSnapshot().rows;
      expect(after).not.toBe(before);
      expect(after[3]!.health?.waiting).toBe(true);
      expect(after[3]).not.toBe(before[3]);
      expect(after.filter((row, i) => row !== before[i]).map((r) => r.taskId)).toEqual(['L3']);
      store.dispose();
    } finally {
      vi.useRealTimers();
    }
  });
});
