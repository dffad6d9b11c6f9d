import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { BatchRecord, ChildRecord } from '../../src/core/records/record.js';
import type { Report } from '../../src/core/records/report.js';
import { preparedRecord, SHA } from '../helpers/records.js';
import { copyRepo, lanesInProcess, leanRepo } from '../e2e/reliability/support.js';

// `lanes status` with machines (docs/DECISIONS.md, "Machines: placement"): each machine
// with its slots, its lanes and its state as the last tick saw it, and each lane's machine,
// in text and in --json; a batch without machines shows what it always showed.

let template: string;
beforeAll(async () => {
  template = await leanRepo();
});

const enrolled = (id: string, machine?: string): ChildRecord => ({
  task_id: id,
  blocked_by: [],
  state: 'enrolled',
  reason: null,
  commit: null,
  lane: {
    path: machine ? `/home/m/.cache/lanes/lanes/${machine}/repo-x/b1/${id}` : `/tmp/lanes/b1/${id}`,
    branch: `lane/b1/${id}`,
    base_head: SHA(1),
    lane_commit: null,
    run_id: `run-${id}`,
  },
  qa_failures: 0,
  ...(machine ? { machine } : {}),
});

function repoWith(record: BatchRecord, report: Report | null, config?: object): string {
  const repo = copyRepo(template);
  const batches = join(repo, '.git', 'lanes', 'batches');
  mkdirSync(batches, { recursive: true });
  writeFileSync(join(batches, 'b1.json'), JSON.stringify(record));
  if (report) writeFileSync(join(batches, 'b1.report.json'), JSON.stringify(report));
  if (config) writeFileSync(join(repo, 'lanes.config.json'), JSON.stringify(config));
  return repo;
}

function running(children: ChildRecord[]): BatchRecord {
  return {
    ...preparedRecord('b1', { T1: [], T2: [], T3: [] }),
    batch_state: 'running',
    max_parallel: 3,
    children,
  };
}

const reportOf = (record: BatchRecord, machines?: Report['machines']): Report => ({
  batch_id: 'b1',
  batch_state: record.batch_state,
  max_parallel: record.max_parallel,
  children: record.children,
  commits: [],
  reason: null,
  handoffs: [],
  lane_refusals: [],
  ...(machines ? { machines } : {}),
  next_action: 'Wait for the running lanes.',
  created_at: '2026-11-29T10:00:01.000Z',
});

const pending = (id: string): ChildRecord => preparedRecord('b1', { [id]: [] }).children[0]!;

describe('lanes status with machines', () => {
  it('shows each machine (slots, lanes, state) and each lane on its machine; --json has them too', async () => {
    const record = running([enrolled('T1', 'box-a'), enrolled('T2'), pending('T3')]);
    const report = reportOf(record, [
      { name: 'local', slots: 1, running: 1, state: 'ready' },
      { name: 'box-a', slots: 2, running: 1, state: 'reconnecting' },
    ]);
    const config = {
      machines: [
        { name: 'local', slots: 1 },
        { name: 'box-a', ssh: 'me@a', slots: 2 },
        { name: 'box-b', ssh: 'me@b', slots: 2 },
      ],
    };
    const repo = repoWith(record, report, config);
    const text = await lanesInProcess(['-C', repo, 'status', 'b1']);
    expect(text.exitCode, text.stderr).toBe(0);
    const lines = text.stdout.split('\n');
    expect(lines).toContain('machine local  1/1 slots  ready  (T2)');
    expect(lines).toContain('machine box-a  1/2 slots  reconnecting  (T1)');
    // (in the config, not in the coordinator's pool: left out at its start)
    expect(lines).toContain('machine box-b  0/2 slots  left out');
    expect(lines.find((l) => l.trimStart().startsWith('T1'))).toMatch(/enrolled\s+on box-a/);
    expect(lines.find((l) => l.trimStart().startsWith('T2'))).toMatch(/enrolled\s+on local/);
    expect(lines.find((l) => l.trimStart().startsWith('T3'))).not.toContain(' on ');

    const json = await lanesInProcess(['-C', repo, 'status', 'b1', '--json']);
    const parsed = JSON.parse(json.stdout) as { machines: unknown; record: BatchRecord };
    expect(parsed.machines).toEqual([
      { name: 'local', slots: 1, running: 1, lanes: ['T2'], state: 'ready' },
      { name: 'box-a', slots: 2, running: 1, lanes: ['T1'], state: 'reconnecting' },
      { name: 'box-b', slots: 2, running: 0, lanes: [], state: 'left out' },
    ]);
    expect(parsed.record.children[0]!.machine).toBe('box-a');
  });

  it('before any tick saw the machines: slots from the config, the state not known', async () => {
    const record = running([pending('T1'), pending('T2'), pending('T3')]);
    const repo = repoWith(record, null, { machines: [{ name: 'box-a', ssh: 'me@a', slots: 2 }] });
    const text = await lanesInProcess(['-C', repo, 'status', 'b1']);
    expect(text.stdout.split('\n')).toContain('machine box-a  0/2 slots');
  });

  it('a batch without machines shows no machine, and its --json has no machines', async () => {
    const record = running([enrolled('T1'), pending('T2'), pending('T3')]);
    const repo = repoWith(record, reportOf(record));
    const text = await lanesInProcess(['-C', repo, 'status', 'b1']);
    expect(text.exitCode, text.stderr).toBe(0);
    expect(text.stdout).not.toContain('machine');
    expect(text.stdout).not.toContain(' on local');
    const json = JSON.parse((await lanesInProcess(['-C', repo, 'status', 'b1', '--json'])).stdout) as object;
    expect(Object.keys(json)).toEqual(['record', 'report', 'usage']);
  });

  it('a record and a report from before machines still read', async () => {
    const record = running([enrolled('T1'), pending('T2'), pending('T3')]);
    const old = reportOf(record) as Partial<Report>;
    delete old.machines;
    const repo = repoWith(record, old as Report);
    expect((await lanesInProcess(['-C', repo, 'status', 'b1', '--json'])).exitCode).toBe(0);
  });
});
