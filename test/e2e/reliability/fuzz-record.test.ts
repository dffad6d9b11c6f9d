import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { LanesError } from '../../../src/core/basics/errors.js';
import type { BatchRecord, ChildRecord } from '../../../src/core/records/record.js';
import {
  admitLane,
  commitLane,
  enroll,
  integrate,
  park,
  recordQaFailure,
  release,
  setBatchState,
  settle,
} from '../../../src/core/records/transitions.js';
import { BatchStore, parseRecordText, recordBytes } from '../../../src/store/batch-store.js';
import { preparedRecord, SHA } from '../../helpers/records.js';
import { tempDir } from '../../helpers/repo.js';
import { applyMutation, mutationArb, textCorruptionArb } from './mutations.js';
import type { Json } from './mutations.js';

// Fuzzing the batch record validator (docs/RELIABILITY.md): random mutations of sound
// records and random corruptions of their text go through the reader (parseRecordText, what
// every read uses) and the writer (BatchStore.write). Each must accept the record or throw
// a LanesError with code state_invalid — nothing else — and a record either accepts must
// keep the invariants of DESIGN §3, as re-stated independently below.

const RUNS = Number(process.env.LANES_FUZZ_RUNS ?? 1000);
const tally = { runs: 0, accepted: 0, refused: 0, writes: 0, writesAccepted: 0 };
afterAll(() => {
  console.log(
    `fuzz-record: ${tally.runs} records read (${tally.accepted} accepted, ${tally.refused} refused with state_invalid); ` +
      `${tally.writes} writes tried (${tally.writesAccepted} accepted)`,
  );
});

const lane = (id: string, batch = 'b1') => ({
  path: `/lanes/${id}`,
  branch: `lane/${batch}/${id}`,
  base_head: SHA(1),
});

/** A running batch with a child in every state. */
function midBatch(): BatchRecord {
  let r = preparedRecord('b1', {
    A: [],
    B: [],
    C: ['A'],
    D: [],
    E: [],
    F: [],
    G: [],
    H: ['G'],
    I: ['B', 'C'],
  });
  r = { ...r, batch_state: 'running', budget: { max_children: 9, qa_failure_limit: 3 } };
  for (const id of ['A', 'B', 'D', 'E', 'F', 'G']) r = admitLane(r, id, lane(id));
  for (const id of ['A', 'B', 'D', 'E', 'G']) r = enroll(r, id, `run-${id}`);
  for (const id of ['A', 'B', 'D']) r = settle(r, id);
  r = recordQaFailure(r, 'E');
  for (const id of ['A', 'B']) r = commitLane(r, id, SHA(10 + id.charCodeAt(0)));
  r = integrate(r, 'A', SHA(100));
  r = integrate(r, 'B', SHA(101));
  r = release(r, 'A');
  r = admitLane(r, 'C', lane('C'));
  r = enroll(r, 'C', 'run-C');
  r = settle(r, 'C');
  r = commitLane(r, 'C', SHA(200));
  r = park(r, 'G', 'QA failure limit reached');
  return { ...r, adopted_heads: [{ from: SHA(101), to: SHA(102) }] };
}

function completed(): BatchRecord {
  let r: BatchRecord = { ...preparedRecord('b1', { T1: [], T2: ['T1'] }), batch_state: 'running' };
  r = admitLane(r, 'T1', lane('T1'));
  r = commitLane(settle(enroll(r, 'T1', 'run-1'), 'T1'), 'T1', SHA(5));
  r = release(integrate(r, 'T1', SHA(6)), 'T1');
  r = admitLane(r, 'T2', lane('T2'));
  r = commitLane(settle(enroll(r, 'T2', 'run-2'), 'T2'), 'T2', SHA(7));
  r = integrate(r, 'T2', SHA(8));
  return setBatchState(r, 'completed');
}

function failed(): BatchRecord {
  let r: BatchRecord = { ...preparedRecord('b1'), batch_state: 'running' };
  r = enroll(admitLane(r, 'T1', lane('T1')), 'T1', 'run-1');
  r = park(r, 'T1', 'batch_head_lineage_broken: reset');
  return setBatchState(r, 'failed');
}

const BASES: BatchRecord[] = [preparedRecord('b1'), midBatch(), completed(), failed()];

// ---- DESIGN §3, re-stated ------------------------------------------------------------------

const BATCH_STATES = [
  'prepared',
  'running',
  'needs_human',
  'completed',
  'budget_stopped',
  'failed',
  'rejected',
];
const IN_FLIGHT = ['lane_admitted', 'enrolled', 'settled', 'lane_committed'];
const INTEGRATED = ['integrated', 'released'];
const CHILD_STATES = ['pending', ...IN_FLIGHT, ...INTEGRATED, 'needs_human', 'skipped_blocked'];
const SHA_RE = /^[0-9a-f]{40}([0-9a-f]{24})?$/;
const ID_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const iso = (v: unknown) =>
  typeof v === 'string' && !Number.isNaN(Date.parse(v)) && /^\d{4}-\d\d-\d\dT/.test(v);

function childProblems(r: BatchRecord, c: ChildRecord): string[] {
  const out: string[] = [];
  const s = c.state;
  if (!CHILD_STATES.includes(s)) out.push(`state ${s}`);
  if (!ID_RE.test(c.task_id)) out.push('task_id');
  const laneSet = c.lane !== null;
  const needsLane = IN_FLIGHT.includes(s) || INTEGRATED.includes(s);
  if ((s === 'pending' || s === 'skipped_blocked') && laneSet) out.push('lane should be null');
  if (needsLane && !laneSet) out.push('lane required');
  if (laneSet) {
    if (!SHA_RE.test(c.lane!.base_head)) out.push('lane.base_head');
    if (c.lane!.lane_commit !== null && !SHA_RE.test(c.lane!.lane_commit)) out.push('lane_commit format');
    if (c.lane!.branch !== `lane/${r.batch_id}/${c.task_id}`) out.push('lane.branch');
  }
  if (['enrolled', 'settled', 'lane_committed', ...INTEGRATED].includes(s) && !c.lane?.run_id)
    out.push('run_id required');
  if (['lane_committed', ...INTEGRATED].includes(s) && !c.lane?.lane_commit) out.push('lane_commit required');
  if (['lane_admitted', 'enrolled', 'settled'].includes(s) && c.lane?.lane_commit)
    out.push('lane_commit early');
  if (INTEGRATED.includes(s) !== (c.commit !== null)) out.push('commit iff integrated');
  if (c.commit !== null && (!SHA_RE.test(c.commit) || !r.commits.includes(c.commit)))
    out.push('commit not in commits');
  const parked = s === 'needs_human' || s === 'skipped_blocked';
  if (parked && !c.reason) out.push('reason required');
  if (!Number.isInteger(c.qa_failures) || c.qa_failures < 0 || c.qa_failures > r.budget.qa_failure_limit)
    out.push('qa_failures');
  for (const d of c.blocked_by)
    if (d === c.task_id || !r.children.some((x) => x.task_id === d)) out.push(`blocked_by ${d}`);
  return out;
}

/** Every problem with a record, judged by DESIGN §3 alone. */
function recordProblems(r: BatchRecord): string[] {
  const out: string[] = [];
  if (r.contract !== 'lanes/batch/v1') out.push('contract');
  if (!ID_RE.test(r.batch_id)) out.push('batch_id');
  if (r.branch !== `batch/${r.batch_id}`) out.push('branch');
  if (!SHA_RE.test(r.base_head)) out.push('base_head');
  if (!/^[0-9a-f]{64}$/.test(r.plan_digest)) out.push('plan_digest');
  for (const t of [r.confirmation_time, r.created_at, r.updated_at]) if (!iso(t)) out.push(`time ${t}`);
  if (Date.parse(r.updated_at) < Date.parse(r.created_at)) out.push('updated before created');
  if (!BATCH_STATES.includes(r.batch_state)) out.push('batch_state');
  for (const n of [r.max_parallel, r.budget.max_children, r.budget.qa_failure_limit])
    if (!Number.isInteger(n) || n < 1) out.push('positive numbers');
  if (!Array.isArray(r.children) || r.children.length === 0) return [...out, 'children'];
  const ids = r.children.map((c) => c.task_id);
  if (new Set(ids).size !== ids.length) out.push('duplicate children');
  for (const c of r.children) out.push(...childProblems(r, c).map((p) => `${c.task_id}: ${p}`));
  if (new Set(r.commits).size !== r.commits.length) out.push('commits twice');
  for (const sha of r.commits) if (!r.children.some((c) => c.commit === sha)) out.push(`stray commit ${sha}`);
  for (const h of r.adopted_heads) if (!SHA_RE.test(h.from) || !SHA_RE.test(h.to)) out.push('adopted_heads');
  if (r.batch_state === 'completed' && r.children.some((c) => !INTEGRATED.includes(c.state)))
    out.push('completed with a child not integrated');
  if (
    ['failed', 'budget_stopped', 'rejected'].includes(r.batch_state) &&
    r.children.some((c) => IN_FLIGHT.includes(c.state))
  )
    out.push(`${r.batch_state} with a child in flight`);
  return out;
}

// ---- the fuzz --------------------------------------------------------------------------

function readOrRefuse(text: string): BatchRecord | null {
  tally.runs++;
  try {
    const record = parseRecordText(text, 'fuzz.json', 'b1');
    tally.accepted++;
    return record;
  } catch (error) {
    if (!(error instanceof LanesError)) throw new Error(`untyped error from the reader: ${String(error)}`);
    expect(error.code).toBe('state_invalid');
    expect(error.exitCode).toBe(2);
    tally.refused++;
    return null;
  }
}

const store = new BatchStore(join(tempDir('lanes-fuzz-'), 'lanes'));

/** The writer validates too: it writes a sound record (read back identical) or refuses, typed. */
function writeOrRefuse(value: Json): void {
  tally.writes++;
  try {
    store.write(value as unknown as BatchRecord);
  } catch (error) {
    if (!(error instanceof LanesError)) throw new Error(`untyped error from the writer: ${String(error)}`);
    expect(error.code).toBe('state_invalid');
    return;
  }
  tally.writesAccepted++;
  const back = store.read((value as { batch_id: string }).batch_id);
  expect(back).not.toBeNull();
  expect(recordProblems(back!)).toEqual([]);
}

describe('fuzzing the batch record validator', () => {
  it('accepts every base record (the fuzzer starts from sound input)', () => {
    for (const base of BASES) {
      const read = readOrRefuse(recordBytes(base));
      expect(read).not.toBeNull();
      expect(recordProblems(read!)).toEqual([]);
    }
  });

  it('mutated records: a typed refusal or a record that keeps every invariant, read and write', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...BASES),
        fc.array(mutationArb, { minLength: 1, maxLength: 3 }),
        (base, mutations) => {
          let value = structuredClone(base) as unknown as Json;
          for (const m of mutations) value = applyMutation(value, m);
          const read = readOrRefuse(JSON.stringify(value));
          if (read) expect(recordProblems(read)).toEqual([]);
          if (value !== null && typeof value === 'object' && !Array.isArray(value) && value.batch_id === 'b1')
            writeOrRefuse(value);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('corrupted record text: a typed refusal or a record that keeps every invariant', () => {
    fc.assert(
      fc.property(fc.constantFrom(...BASES), textCorruptionArb, (base, corrupt) => {
        const read = readOrRefuse(corrupt(recordBytes(base)));
        if (read) expect(recordProblems(read)).toEqual([]);
      }),
      { numRuns: Math.ceil(RUNS / 2) },
    );
  });
});
