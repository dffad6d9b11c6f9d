import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
  appendFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BatchRecord } from '../../src/core/records/record.js';
import type { Report } from '../../src/core/records/report.js';
import { admitLane, enroll } from '../../src/core/records/transitions.js';
import { newKernelRecord } from '../../src/core/records/kernel.js';
import { BatchStore, recordBytes } from '../../src/store/batch-store.js';
import { fsyncsReferences, readStateFlush, stateFlush } from '../../src/store/durability.js';
import { BatchFiles } from '../../src/store/batch-files.js';
import { Journal } from '../../src/store/journal.js';
import { TaskStore } from '../../src/store/task-store.js';
import { findRepo } from '../../src/store/state-dir.js';
import { writeStateFileAtomic } from '../../src/store/safe-fs.js';
import { preparedRecord, SHA } from '../helpers/records.js';
import { git, makeRepo, snapshotTree, tempDir } from '../helpers/repo.js';
import { until } from '../helpers/until.js';

/** A new kernel record of batch b1 for `taskId`. */
function kernelOf(taskId: string) {
  return newKernelRecord({
    batchId: 'b1',
    taskId,
    runId: 'run-1',
    lanePath: `/lanes/${taskId}`,
    baseHead: SHA(1),
    reviewRequired: false,
    now: '2026-12-01T10:00:00.000Z',
  });
}

function report(record: BatchRecord, overrides: Partial<Report> = {}): Report {
  return {
    batch_id: record.batch_id,
    batch_state: record.batch_state,
    max_parallel: record.max_parallel,
    children: record.children,
    commits: record.commits,
    reason: null,
    handoffs: [],
    lane_refusals: [],
    next_action: 'nothing',
    created_at: '2026-11-29T10:00:00.000Z',
    ...overrides,
  };
}

describe('state directory', () => {
  it('lives under the git common dir, also from a linked worktree', async () => {
    const repo = await makeRepo();
    const wt = join(tempDir(), 'wt');
    await git(repo, 'worktree', 'add', '-q', '-b', 'side', wt);
    const fromMain = await findRepo(repo);
    const fromLinked = await findRepo(join(wt));
    expect(fromMain.stateDir).toBe(join(repo, '.git', 'lanes'));
    expect(fromLinked.stateDir).toBe(fromMain.stateDir);
    expect(fromLinked.root).toBe(wt);
  });

  it('says clearly when a folder is not in a repository', async () => {
    await expect(findRepo(tempDir())).rejects.toMatchObject({ code: 'not_a_repository', exitCode: 2 });
  });
});

describe('BatchStore', () => {
  it('writes and reads back a record byte-stable', () => {
    const store = new BatchStore(join(tempDir(), 'lanes'));
    const record = preparedRecord('b1');
    store.write(record);
    expect(store.read('b1')).toEqual(record);
    expect(readFileSync(store.paths('b1').record, 'utf8')).toBe(recordBytes(record));
    expect(store.list()).toEqual(['b1']);
    expect(store.read('nope')).toBeNull();
  });

  it('hands every reader the record written, frozen: a change by one reader throws, the file is read again once it changed', () => {
    const store = new BatchStore(join(tempDir(), 'lanes'));
    const record = preparedRecord('b1');
    store.write(record);
    const read = store.read('b1')!;
    expect(store.read('b1')).toBe(read);
    expect(() => {
      (read.children[0] as { state: string }).state = 'integrated';
    }).toThrow(TypeError);
    expect(() => (read.commits as string[]).push(SHA(9))).toThrow(TypeError);
    // (what the writer handed in is what the readers get: frozen too, the text not parsed again)
    expect(read).toBe(record);
    expect(Object.isFrozen(record.children[0])).toBe(true);
    store.write({ ...record, max_parallel: 3 });
    expect(store.read('b1')).not.toBe(read);
    expect(store.read('b1')!.max_parallel).toBe(3);
  });

  it('refuses to write a record that breaks an invariant, and writes nothing', () => {
    const stateDir = join(tempDir(), 'lanes');
    const store = new BatchStore(stateDir);
    const record = preparedRecord('b1');
    store.write(record);
    const before = snapshotTree(stateDir);
    const bad: BatchRecord = { ...record, batch_state: 'completed' };
    expect(() => store.write(bad)).toThrow(/completed, but a child is not integrated/);
    expect(snapshotTree(stateDir)).toEqual(before);
  });

  it('never overwrites an invalid record on disk', () => {
    const stateDir = join(tempDir(), 'lanes');
    const store = new BatchStore(stateDir);
    store.write(preparedRecord('b1'));
    const path = store.paths('b1').record;
    writeFileSync(path, '{"contract": "lanes/batch/v1", "trunc');
    const before = snapshotTree(stateDir);
    expect(() => store.write(preparedRecord('b1'))).toThrow(/not valid JSON/);
    expect(snapshotTree(stateDir)).toEqual(before);
  });

  it('reads a record again whenever the file changed behind it, however it changed', () => {
    // The store skips reading a file that still has the stamp it read or wrote (inode,
    // size, times): a change in place of the same length, or a rename over it, is seen.
    const stateDir = join(tempDir(), 'lanes');
    const store = new BatchStore(stateDir);
    const record = preparedRecord('b1');
    store.write(record);
    expect(store.read('b1')?.max_parallel).toBe(record.max_parallel);
    const path = store.paths('b1').record;
    const other = (n: number) => recordBytes({ ...record, max_parallel: n });
    expect(other(7).length).toBe(recordBytes(record).length);
    writeFileSync(path, other(7)); // (in place: same inode, same size)
    expect(store.read('b1')?.max_parallel).toBe(7);
    writeFileSync(`${path}.new`, other(5));
    renameSync(`${path}.new`, path); // (a new inode)
    expect(store.read('b1')?.max_parallel).toBe(5);
    const kernels = new TaskStore(stateDir, 'b1');
    const kernel = kernelOf('c1');
    kernels.write(kernel);
    expect(kernels.read('c1')).toEqual({ kind: 'ok', record: kernel });
    const kernelPath = kernels.path('c1');
    writeFileSync(kernelPath, readFileSync(kernelPath, 'utf8').replace('"run-1"', '"run-2"'));
    expect(kernels.read('c1')).toMatchObject({ kind: 'ok', record: { run_id: 'run-2' } });
    writeFileSync(kernelPath, '{');
    expect(kernels.read('c1')).toMatchObject({ kind: 'unreadable' });
    rmSync(kernelPath);
    expect(kernels.read('c1')).toEqual({ kind: 'missing' });
    symlinkSync(path, kernelPath);
    expect(kernels.read('c1')).toMatchObject({
      kind: 'unreadable',
      why: expect.stringMatching(/symbolic link/),
    });
  });

  it('refuses a symbolic link anywhere under the state directory', () => {
    const base = tempDir();
    const stateDir = join(base, 'lanes');
    const elsewhere = join(base, 'elsewhere');
    mkdirSync(elsewhere);
    mkdirSync(stateDir);
    symlinkSync(elsewhere, join(stateDir, 'batches'));
    const store = new BatchStore(stateDir);
    expect(() => store.write(preparedRecord('b1'))).toThrow(/symbolic link/);
    expect(() => store.read('b1')).toThrow(/symbolic link/);
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  it('refuses a record file that is itself a symbolic link', () => {
    const base = tempDir();
    const stateDir = join(base, 'lanes');
    mkdirSync(join(stateDir, 'batches'), { recursive: true });
    writeFileSync(join(base, 'target.json'), recordBytes(preparedRecord('b1')));
    symlinkSync(join(base, 'target.json'), join(stateDir, 'batches', 'b1.json'));
    expect(() => new BatchStore(stateDir).read('b1')).toThrow(/symbolic link/);
  });

  it('leaves no temp file behind and replaces the file whole', () => {
    const stateDir = join(tempDir(), 'lanes');
    const path = join(stateDir, 'batches', 'x.json');
    writeStateFileAtomic(stateDir, path, 'one\n');
    writeStateFileAtomic(stateDir, path, 'two\n');
    expect(readFileSync(path, 'utf8')).toBe('two\n');
    expect(readdirSync(join(stateDir, 'batches'))).toEqual(['x.json']);
  });

  it('keeps a terminal report immutable but replaces a running one', () => {
    const store = new BatchStore(join(tempDir(), 'lanes'));
    let record = preparedRecord('b1');
    store.write(record);
    store.writeReport(report(record, { next_action: 'first' }));
    store.writeReport(report(record, { next_action: 'second' }));
    expect(store.readReport('b1')?.next_action).toBe('second');
    record = { ...record, batch_state: 'budget_stopped' }; // a stop, not an end: replaced too
    store.writeReport(report(record, { next_action: 'stopped' }));
    record = { ...record, batch_state: 'cancelled' };
    store.writeReport(report(record, { next_action: 'final' }));
    expect(() => store.writeReport(report(record, { next_action: 'again' }))).toThrow(/never overwritten/);
    expect(store.readReport('b1')?.next_action).toBe('final');
  });

  it("rewrites a running batch's report at most so often, the latest one last; any other at once", async () => {
    const stateDir = join(tempDir(), 'lanes');
    const files = new BatchFiles(stateDir, 'b1');
    const record: BatchRecord = { ...preparedRecord('b1'), batch_state: 'running' };
    files.writeRecord(record);
    const onDisk = () => new BatchStore(stateDir).readReport('b1')?.next_action;
    files.writeReport(report(record, { next_action: 'first' }));
    expect(onDisk()).toBe('first'); // the first at once
    files.writeReport(report(record, { next_action: 'second' }));
    files.writeReport(report(record, { next_action: 'third' }));
    expect(onDisk()).toBe('first'); // held back
    await until(() => onDisk() === 'third', 'the latest running report', { timeoutMs: 5_000 });
    files.writeReport(report(record, { next_action: 'fourth' }));
    files.flushReport();
    expect(onDisk()).toBe('fourth');
    files.writeReport(report(record, { next_action: 'fifth' }));
    const stopped = { ...record, batch_state: 'needs_human' as const };
    files.writeReport(report(stopped, { next_action: 'stopped' }));
    expect(onDisk()).toBe('stopped'); // at once, and what waited is dropped
    files.flushReport();
    expect(onDisk()).toBe('stopped');
  });

  it('validates records built by transitions', () => {
    const store = new BatchStore(join(tempDir(), 'lanes'));
    let record: BatchRecord = { ...preparedRecord('b1'), batch_state: 'running' };
    record = admitLane(record, 'T1', { path: '/tmp/x/T1', branch: 'lane/b1/T1', base_head: SHA(1) });
    record = enroll(record, 'T1', 'run-1');
    store.write(record);
    expect(store.read('b1')?.children[0]?.state).toBe('enrolled');
  });
});

describe('Journal', () => {
  it('appends one JSON object a line and reads them back', () => {
    const stateDir = join(tempDir(), 'lanes');
    const path = join(stateDir, 'batches', 'b1.events.jsonl');
    const journal = new Journal(stateDir, path, 'b1');
    journal.append('batch-confirmed', { children: 3 });
    journal.append('lane-admitted', { task: 'T1', path: '/x' });
    const lines = readFileSync(path, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(2);
    const { entries, unreadable } = journal.read();
    expect(unreadable).toBe(0);
    expect(entries.map((e) => e.event)).toEqual(['batch-confirmed', 'lane-admitted']);
    expect(entries[1]).toMatchObject({ batch: 'b1', task: 'T1', path: '/x' });
  });

  it('survives a torn last line (a crash mid-append)', () => {
    const stateDir = join(tempDir(), 'lanes');
    const path = join(stateDir, 'batches', 'b1.events.jsonl');
    const journal = new Journal(stateDir, path, 'b1');
    journal.append('tick');
    appendFileSync(path, '{"ts":"2026-');
    const { entries, unreadable } = journal.read();
    expect(entries).toHaveLength(1);
    expect(unreadable).toBe(1);
    expect(existsSync(path)).toBe(true);
  });
});

describe('durability follows git (store/durability.ts)', () => {
  it('reads whether core.fsync flushes references: words left to right, none and -word take away', () => {
    for (const [value, refs] of [
      [null, false],
      ['', false],
      ['pack,loose-object', false],
      ['reference', true],
      ['committed', true],
      ['added', true],
      ['ALL', true],
      ['all,-reference', false],
      ['all,-committed', false],
      ['committed,none', false],
      ['none, reference', true],
      ['-reference,committed', true],
    ] as const)
      expect(fsyncsReferences(value), String(value)).toBe(refs);
  });

  it('flushes state files only in a repository whose git flushes its references', async () => {
    const plain = (await findRepo(await makeRepo())).stateDir;
    expect(stateFlush(plain)).toBe(false);
    const flushingRepo = await makeRepo();
    await git(flushingRepo, 'config', 'core.fsync', 'committed');
    const flushing = (await findRepo(flushingRepo)).stateDir;
    expect(stateFlush(flushing)).toBe(true);
    expect(stateFlush(plain)).toBe(false);
  });

  it('reads whether to flush ahead, through the process helper, with the same answer', async () => {
    const flushingRepo = await makeRepo();
    await git(flushingRepo, 'config', 'core.fsync', 'reference,-reference');
    const notFlushing = (await findRepo(flushingRepo)).stateDir;
    await readStateFlush(notFlushing);
    // (read ahead: changing the config now no longer changes the answer)
    await git(flushingRepo, 'config', 'core.fsync', 'all');
    expect(stateFlush(notFlushing)).toBe(false);
    const allRepo = await makeRepo();
    await git(allRepo, 'config', 'core.fsync', 'all');
    const all = (await findRepo(allRepo)).stateDir;
    await readStateFlush(all);
    expect(stateFlush(all)).toBe(true);
  });
});

describe('TaskStore', () => {
  it('hands every reader the same kernel record, frozen, and reads it again once the file changed', () => {
    const stateDir = join(tempDir(), 'lanes');
    const tasks = new TaskStore(stateDir, 'b1');
    const kernel = kernelOf('T1');
    tasks.write(kernel);
    const read = tasks.read('T1');
    if (read.kind !== 'ok') throw new Error(read.kind);
    expect(tasks.read('T1')).toEqual(read);
    expect((tasks.read('T1') as typeof read).record).toBe(read.record);
    expect(() => (read.record.attempts as unknown[]).push({})).toThrow(TypeError);
    expect(Object.isFrozen(kernel)).toBe(false); // (what the writer handed in stays its own)
    tasks.write({ ...kernel, run_id: 'run-2' });
    const again = tasks.read('T1');
    expect(again.kind === 'ok' && again.record.run_id).toBe('run-2');
  });
});
