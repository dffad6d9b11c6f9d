import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BatchRecord, ChildRecord } from '../../src/core/records/record.js';
import type { Report } from '../../src/core/records/report.js';
import { BatchFiles } from '../../src/store/batch-files.js';
import { TuiStore } from '../../src/tui/tui-store.js';
import { memoryPlan } from '../helpers/memory-ports.js';
import { preparedRecord, SHA } from '../helpers/records.js';
import { tempDir } from '../helpers/repo.js';

// The TUI's rows carry each lane's machine once the batch has machines (the lane list shows
// it: components/LaneList.tsx); a batch without machines has none, as before.

const withLane = (child: ChildRecord, machine?: string): ChildRecord => ({
  ...child,
  state: 'lane_admitted',
  lane: {
    path: `/l/${child.task_id}`,
    branch: `lane/b1/${child.task_id}`,
    base_head: SHA(1),
    lane_commit: null,
    run_id: null,
  },
  ...(machine ? { machine } : {}),
});

function storeWith(children: (r: BatchRecord) => ChildRecord[]): TuiStore {
  const stateDir = join(tempDir('lanes-tui-m-'), 'state');
  mkdirSync(stateDir, { recursive: true });
  const files = new BatchFiles(stateDir, 'b1');
  const record = preparedRecord('b1', { T1: [], T2: [], T3: [] });
  files.writeRecord({ ...record, batch_state: 'running', max_parallel: 3, children: children(record) });
  return new TuiStore(files, memoryPlan('b1', ['T1', 'T2', 'T3'], 3));
}

describe('the TUI rows with machines', () => {
  it("each lane's machine, local ones named too, none for a child without a lane", () => {
    const store = storeWith((r) => [
      withLane(r.children[0]!, 'box-a'),
      withLane(r.children[1]!),
      r.children[2]!,
    ]);
    expect(store.getSnapshot().rows.map((row) => row.machine)).toEqual(['box-a', 'local', undefined]);
  });

  it('a batch without machines: no machine on any row', () => {
    const store = storeWith((r) => [withLane(r.children[0]!), withLane(r.children[1]!), r.children[2]!]);
    expect(store.getSnapshot().rows.map((row) => row.machine)).toEqual([undefined, undefined, undefined]);
  });

  it('the machines that do not answer, from the last report (the header says them)', () => {
    const store = storeWith((r) => [
      withLane(r.children[0]!, 'box-a'),
      withLane(r.children[1]!, 'box-b'),
      r.children[2]!,
    ]);
    const machines = [
      { name: 'box-a', slots: 2, running: 1, state: 'reconnecting' as const },
      { name: 'box-b', slots: 2, running: 1, state: 'lost' as const },
      { name: 'box-c', slots: 2, running: 0, state: 'ready' as const },
    ];
    const report: Report = {
      batch_id: 'b1',
      batch_state: 'running',
      max_parallel: 3,
      children: [],
      commits: [],
      reason: null,
      handoffs: [],
      lane_refusals: [],
      machines,
      next_action: '',
      created_at: new Date(0).toISOString(),
    };
    store.applyReport(report);
    expect(store.getSnapshot().machinesAway).toEqual([
      { name: 'box-a', state: 'reconnecting' },
      { name: 'box-b', state: 'lost' },
    ]);
  });
});
