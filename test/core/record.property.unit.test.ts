import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { BatchRecord, BatchState, ChildRecord } from '../../src/core/records/record.js';
import {
  batchRecordSchema,
  checkRecordInvariants,
  IN_FLIGHT_STATES,
  INTEGRATED_STATES,
  TERMINAL_BATCH_STATES,
  countsAgainstBudget,
} from '../../src/core/records/record.js';
import {
  admitLane,
  adoptHead,
  commitLane,
  enroll,
  integrate,
  isStartable,
  park,
  recordQaFailure,
  release,
  setBatchState,
  settle,
  unpark,
  unskip,
} from '../../src/core/records/transitions.js';
import { preparedRecord, SHA } from '../helpers/records.js';
import { cancelBatch } from '../../src/core/ways-out/cancel.js';
import { dropChildren, dropRefusal } from '../../src/core/ways-out/drop.js';

// The batch record validator against the legal moves of src/core/transitions.ts: every
// record the moves build validates, and one illegal edit of such a record never does.

interface Scenario {
  deps: Record<string, string[]>;
  maxChildren: number;
  qaLimit: number;
  steps: number[];
}

const NUM_RUNS = 250;

const scenarioArb: fc.Arbitrary<Scenario> = fc.integer({ min: 3, max: 12 }).chain((n) =>
  fc.record({
    deps: fc
      .tuple(
        ...Array.from({ length: n }, (_, i) =>
          fc.subarray(
            Array.from({ length: i }, (_, j) => `T${j}`),
            { maxLength: Math.min(3, i) },
          ),
        ),
      )
      .map((lists) => Object.fromEntries(lists.map((deps, i) => [`T${i}`, deps]))),
    maxChildren: fc.oneof(fc.constant(n), fc.integer({ min: 1, max: n })),
    qaLimit: fc.integer({ min: 1, max: 3 }),
    steps: fc.array(fc.nat(), { maxLength: 120, size: 'max' }),
  }),
);

interface Move {
  name: string;
  apply: () => BatchRecord;
}

/** Fresh, unique commit ids and run ids for one scenario. */
function counters() {
  let n = 0;
  return { sha: () => SHA(0x1000 + ++n), runId: () => `run-${++n}` };
}
type Counters = ReturnType<typeof counters>;

const started = (r: BatchRecord) => r.children.filter(countsAgainstBudget).length;
const head = (r: BatchRecord) => r.commits.at(-1) ?? r.adopted_heads.at(-1)?.to ?? r.base_head;
const laneFor = (r: BatchRecord, c: ChildRecord) => ({
  path: `/lanes/${r.batch_id}/${c.task_id}`,
  branch: `lane/${r.batch_id}/${c.task_id}`,
  base_head: head(r),
});

const PROGRESS = 8;

/** Every legal move from `r`; progress moves are listed `weight` times to reach deep states. */
function legalMoves(r: BatchRecord, ids: Counters, mayStop: boolean): Move[] {
  const moves: Move[] = [];
  const add = (name: string, apply: () => BatchRecord, weight = 1) => {
    for (let i = 0; i < weight; i++) moves.push({ name, apply });
  };
  const inFlight = r.children.some((c) => IN_FLIGHT_STATES.has(c.state));
  const batch = (state: BatchState, weight: number) =>
    add(`batch ${state}`, () => setBatchState(r, state), weight);

  if (TERMINAL_BATCH_STATES.has(r.batch_state)) {
    // After the end only releases are still recorded.
    for (const c of r.children)
      if (c.state === 'integrated') add(`release ${c.task_id}`, () => release(r, c.task_id));
    return moves;
  }
  if (r.batch_state === 'budget_stopped') {
    // A stop, not an end: releases, a resume with a larger budget, a cancel.
    for (const c of r.children)
      if (c.state === 'integrated') add(`release ${c.task_id}`, () => release(r, c.task_id));
    batch('running', 1);
    add('cancel', () => cancelBatch(r), 1);
    return moves;
  }
  batch('running', r.batch_state === 'prepared' ? 30 : 1);
  if (mayStop) add('cancel', () => cancelBatch(r), 1);
  // (parked children and the first one in flight: enough to reach every dropped shape)
  const droppable = [
    ...r.children.filter((c) => c.state === 'needs_human'),
    ...r.children.filter((c) => IN_FLIGHT_STATES.has(c.state)).slice(0, 1),
  ];
  for (const c of droppable)
    if (dropRefusal(r, c.task_id) === null) add(`drop ${c.task_id}`, () => dropChildren(r, c.task_id), 1);
  if (!inFlight && mayStop) {
    batch('failed', 1);
    batch('budget_stopped', 1);
    batch('rejected', 1);
  }
  if (r.batch_state === 'prepared') return moves;
  batch('needs_human', 1);
  if (r.children.every((c) => INTEGRATED_STATES.has(c.state) || c.state === 'dropped'))
    batch('completed', 20);

  const room = started(r) < r.budget.max_children;
  for (const c of r.children) {
    const id = c.task_id;
    const reason = `${id} needs a human`;
    switch (c.state) {
      case 'pending':
        if (room && isStartable(r, c)) add(`admit ${id}`, () => admitLane(r, id, laneFor(r, c)), PROGRESS);
        if (room) add(`park ${id}`, () => park(r, id, reason));
        break;
      case 'lane_admitted':
        add(`enroll ${id}`, () => enroll(r, id, ids.runId()), PROGRESS);
        add(`park ${id}`, () => park(r, id, reason));
        break;
      case 'enrolled':
        add(`settle ${id}`, () => settle(r, id), PROGRESS);
        if (c.qa_failures < r.budget.qa_failure_limit)
          add(`qa failure ${id}`, () => recordQaFailure(r, id), 2);
        add(`park ${id}`, () => park(r, id, reason));
        break;
      case 'settled':
        add(`commit ${id}`, () => commitLane(r, id, ids.sha()), PROGRESS);
        add(`park ${id}`, () => park(r, id, reason));
        break;
      case 'lane_committed':
        add(`integrate ${id}`, () => integrate(r, id, ids.sha()), PROGRESS);
        add(`park ${id}`, () => park(r, id, reason));
        break;
      case 'integrated':
        add(`release ${id}`, () => release(r, id), 2);
        break;
      case 'needs_human':
        add(`park ${id}`, () => park(r, id, reason));
        add(`unpark ${id} pending`, () => unpark(r, id, 'pending'), 2);
        if (c.lane?.run_id) {
          add(`unpark ${id} enrolled`, () => unpark(r, id, 'enrolled'), 2);
          add(`unpark ${id} settled`, () => unpark(r, id, 'settled'), 2);
        }
        if (c.lane?.lane_commit) add(`unpark ${id} lane_committed`, () => unpark(r, id, 'lane_committed'), 2);
        break;
      default:
        break;
    }
  }
  if (r.children.some((c) => c.state === 'skipped_blocked')) add('unskip', () => unskip(r));
  add('adopt head', () => adoptHead(r, head(r), ids.sha()));
  return moves;
}

function problemsOf(r: BatchRecord): string[] {
  const parsed = batchRecordSchema.safeParse(r);
  if (!parsed.success) return parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  return checkRecordInvariants(parsed.data);
}

function start(s: Scenario): BatchRecord {
  const r = preparedRecord('b1', s.deps);
  return { ...r, budget: { max_children: s.maxChildren, qa_failure_limit: s.qaLimit } };
}

/** Plays the scenario's steps; `visit` sees every record reached, the first included. */
function play(s: Scenario, visit: (r: BatchRecord, history: string[]) => void): BatchRecord {
  const ids = counters();
  let r = start(s);
  const history: string[] = [];
  visit(r, history);
  s.steps.forEach((step, i) => {
    // The batch may fail or stop only near the end, so that most walks go deep.
    const moves = legalMoves(r, ids, i >= s.steps.length - 8);
    if (moves.length === 0) return;
    const move = moves[step % moves.length]!;
    history.push(move.name);
    r = { ...move.apply(), updated_at: new Date(Date.parse(r.created_at) + (i + 1) * 1000).toISOString() };
    visit(r, history);
  });
  return r;
}

const movesSeen = new Map<string, number>();
const mutationsSeen = new Map<string, number>();
const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);

describe('a record built by legal transitions', () => {
  it('always validates', () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        play(s, (r, history) => {
          bump(movesSeen, (history.at(-1) ?? 'start').replace(/ T\d+/, ''));
          const problems = problemsOf(r);
          if (problems.length > 0)
            throw new Error(`after ${history.join(', ')}:\n  ${problems.join('\n  ')}`);
        });
      }),
      { numRuns: NUM_RUNS },
    );
  });

  afterAll(() => {
    // Every kind of move was taken at least once, so none is dead code in the model.
    const kinds = [...movesSeen.keys()].map((k) =>
      k.replace(/ (pending|enrolled|settled|lane_committed)$/, ''),
    );
    for (const kind of ['admit', 'enroll', 'settle', 'qa failure', 'commit', 'integrate', 'release', 'park'])
      expect(kinds, kind).toContain(kind);
    for (const kind of [
      'unpark',
      'unskip',
      'adopt head',
      'batch running',
      'batch needs_human',
      'batch completed',
    ])
      expect(kinds, kind).toContain(kind);
    for (const kind of ['batch failed', 'batch budget_stopped', 'batch rejected'])
      expect(kinds, kind).toContain(kind);
  });
});

// ---------------------------------------------------------------------------------------
// Illegal mutations: each applies to a copy of a sound record when its precondition holds.

interface Mutation {
  name: string;
  /** A child mutation: the children whose state makes it illegal (one is picked). */
  when?: (c: ChildRecord, r: BatchRecord) => boolean;
  /** A record mutation: whether the record's state makes it illegal. */
  whole?: (r: BatchRecord) => boolean;
  /** Edits the copy in place; `c` is the picked child (only for child mutations). */
  edit: (r: BatchRecord, c: ChildRecord, pick: number) => void;
}

const LANED: ReadonlySet<string> = new Set([...IN_FLIGHT_STATES, ...INTEGRATED_STATES]);
const parked = (c: ChildRecord) =>
  c.state === 'needs_human' || c.state === 'skipped_blocked' || c.state === 'dropped';
const byId = (r: BatchRecord, id: string) => r.children.find((c) => c.task_id === id)!;
const STRAY = SHA(0xdead);
const laneOf = (r: BatchRecord, c: ChildRecord) => ({ ...laneFor(r, c), lane_commit: null, run_id: 'run-x' });

const MUTATIONS: Mutation[] = [
  // lanes
  {
    name: 'lane on a pending child',
    when: (c) => c.state === 'pending',
    edit: (r, c) => void (c.lane = laneOf(r, c)),
  },
  {
    name: 'lane on a skipped_blocked child',
    when: (c) => c.state === 'skipped_blocked',
    edit: (r, c) => void (c.lane = laneOf(r, c)),
  },
  {
    name: 'in flight or integrated without a lane',
    when: (c) => LANED.has(c.state),
    edit: (_, c) => void (c.lane = null),
  },
  {
    name: 'lane branch mismatch',
    when: (c) => c.lane !== null,
    edit: (r, c) => void (c.lane!.branch = `lane/${r.batch_id}/someone-else`),
  },
  {
    name: 'relative lane path',
    when: (c) => c.lane !== null,
    edit: (_, c) => void (c.lane!.path = 'lanes/T0'),
  },
  { name: 'empty run_id', when: (c) => c.lane !== null, edit: (_, c) => void (c.lane!.run_id = '') },
  {
    name: 'bad lane base_head',
    when: (c) => c.lane !== null,
    edit: (_, c) => void (c.lane!.base_head = 'HEAD'),
  },
  {
    name: 'lane on a child whose dependency is not integrated',
    when: (c, r) =>
      c.state === 'pending' && c.blocked_by.some((d) => !INTEGRATED_STATES.has(byId(r, d).state)),
    edit: (r, c) => {
      c.state = 'lane_admitted';
      c.lane = { ...laneOf(r, c), run_id: null };
    },
  },
  {
    name: 'laned child gains a dependency that is not integrated',
    when: (c, r) =>
      c.lane !== null &&
      r.children.some((d) => d !== c && !INTEGRATED_STATES.has(d.state) && !c.blocked_by.includes(d.task_id)),
    edit: (r, c) => {
      const d = r.children.find(
        (d) => d !== c && !INTEGRATED_STATES.has(d.state) && !c.blocked_by.includes(d.task_id),
      )!;
      c.blocked_by.push(d.task_id);
    },
  },
  // run ids and lane commits
  {
    name: 'enrolled without run_id',
    when: (c) => c.state === 'lane_admitted',
    edit: (_, c) => void (c.state = 'enrolled'),
  },
  {
    name: 'run_id cleared after enrolment',
    when: (c) =>
      c.lane?.run_id != null &&
      c.state !== 'lane_admitted' &&
      c.state !== 'needs_human' &&
      c.state !== 'dropped',
    edit: (_, c) => void (c.lane!.run_id = null),
  },
  {
    name: 'lane_committed without lane_commit',
    when: (c) => c.state === 'settled',
    edit: (_, c) => void (c.state = 'lane_committed'),
  },
  {
    name: 'lane_commit cleared after the lane commit',
    when: (c) => c.state === 'lane_committed' || INTEGRATED_STATES.has(c.state),
    edit: (_, c) => void (c.lane!.lane_commit = null),
  },
  {
    name: 'lane_commit before the lane commit',
    when: (c) => c.state === 'lane_admitted' || c.state === 'enrolled' || c.state === 'settled',
    edit: (_, c) => void (c.lane!.lane_commit = STRAY),
  },
  // commits
  {
    name: 'integrated without a commit',
    when: (c) => c.state === 'lane_committed',
    edit: (_, c) => void (c.state = 'integrated'),
  },
  {
    name: 'commit of an integrated child cleared',
    when: (c) => INTEGRATED_STATES.has(c.state),
    edit: (_, c) => void (c.commit = null),
  },
  {
    name: 'integrated child back to lane_committed',
    when: (c) => c.state === 'integrated',
    edit: (_, c) => void (c.state = 'lane_committed'),
  },
  {
    name: 'commit on a child that is not integrated',
    when: (c) => !INTEGRATED_STATES.has(c.state),
    edit: (r, c) => {
      c.commit = STRAY;
      r.commits.push(STRAY);
    },
  },
  {
    name: 'commit removed from commits',
    whole: (r) => r.commits.length > 0,
    edit: (r, _, pick) => void r.commits.splice(pick % r.commits.length, 1),
  },
  {
    name: 'commit listed twice',
    whole: (r) => r.commits.length > 0,
    edit: (r, _, pick) => void r.commits.push(r.commits[pick % r.commits.length]!),
  },
  { name: 'commit of no child in commits', whole: () => true, edit: (r) => void r.commits.push(STRAY) },
  {
    name: 'two children share a commit',
    whole: (r) => r.children.filter((c) => c.commit !== null).length >= 2,
    edit: (r) => {
      const [a, b] = r.children.filter((c) => c.commit !== null);
      r.commits = r.commits.filter((x) => x !== b!.commit);
      b!.commit = a!.commit;
    },
  },
  { name: 'malformed commit id', whole: () => true, edit: (r) => void r.commits.push('abc123') },
  // reasons
  {
    name: 'needs_human without a reason',
    when: (c) => c.state === 'needs_human',
    edit: (_, c) => void (c.reason = null),
  },
  {
    name: 'skipped_blocked without a reason',
    when: (c) => c.state === 'skipped_blocked',
    edit: (_, c) => void (c.reason = null),
  },
  { name: 'empty reason', when: (c) => parked(c), edit: (_, c) => void (c.reason = '') },
  {
    name: 'reason on a pending child',
    when: (c) => c.state === 'pending',
    edit: (_, c) => void (c.reason = 'why'),
  },
  {
    name: 'reason on a child that is not parked',
    when: (c) => !parked(c) && c.state !== 'pending',
    edit: (_, c) => void (c.reason = 'why'),
  },
  {
    name: 'skipped_blocked with no parked dependency',
    when: (c, r) => c.state === 'pending' && !c.blocked_by.some((d) => parked(byId(r, d))),
    edit: (_, c) => {
      c.state = 'skipped_blocked';
      c.reason = 'blocked by nothing';
    },
  },
  // QA failures and budget
  {
    name: 'qa_failures past the limit',
    when: () => true,
    edit: (r, c) => void (c.qa_failures = r.budget.qa_failure_limit + 1),
  },
  {
    name: 'qa_failure_limit lowered under a count',
    whole: (r) => r.children.some((c) => c.qa_failures >= 2),
    edit: (r) => void (r.budget.qa_failure_limit = Math.max(...r.children.map((c) => c.qa_failures)) - 1),
  },
  { name: 'negative qa_failures', when: () => true, edit: (_, c) => void (c.qa_failures = -1) },
  {
    name: 'max_children under the started count',
    whole: (r) => started(r) >= 2,
    edit: (r) => void (r.budget.max_children = started(r) - 1),
  },
  // batch state
  {
    name: 'completed while a child is not integrated',
    whole: (r) => r.children.some((c) => !INTEGRATED_STATES.has(c.state) && c.state !== 'dropped'),
    edit: (r) => void (r.batch_state = 'completed'),
  },
  {
    name: 'failed, budget_stopped, rejected or cancelled with a child in flight',
    whole: (r) => r.children.some((c) => IN_FLIGHT_STATES.has(c.state)),
    edit: (r, _, pick) =>
      void (r.batch_state = (['failed', 'budget_stopped', 'rejected', 'cancelled'] as const)[pick % 4]!),
  },
  {
    name: 'dropped without a reason',
    when: (c) => c.state === 'dropped',
    edit: (_, c) => void (c.reason = null),
  },
  {
    name: 'a child of a dropped dependency is not dropped',
    when: (c, r) => c.state === 'dropped' && r.children.some((d) => d.blocked_by.includes(c.task_id)),
    edit: (r, c) => {
      const d = r.children.find((d) => d.blocked_by.includes(c.task_id))!;
      Object.assign(d, { state: 'pending', reason: null, lane: null, commit: null });
    },
  },
  {
    name: 'dropped with a commit',
    when: (c) => c.state === 'dropped',
    edit: (r, c) => {
      c.commit = STRAY;
      r.commits.push(STRAY);
    },
  },
  {
    name: 'prepared with a child that is not pending',
    // (a child dropped before it took a lane may be dropped in a prepared batch)
    whole: (r) =>
      r.children.some((c) => c.state !== 'pending' && !(c.state === 'dropped' && c.lane === null)),
    edit: (r) => void (r.batch_state = 'prepared'),
  },
  // identity and structure
  {
    name: 'duplicate child',
    when: () => true,
    edit: (r, c) =>
      void r.children.push(
        structuredClone({ ...c, commit: null, state: 'pending', lane: null, reason: null }),
      ),
  },
  { name: 'wrong batch branch', whole: () => true, edit: (r) => void (r.branch = 'batch/other') },
  { name: 'branch of another batch id', whole: () => true, edit: (r) => void (r.batch_id = 'b2') },
  { name: 'blocked_by an unknown child', when: () => true, edit: (_, c) => void c.blocked_by.push('ghost') },
  { name: 'blocked_by itself', when: () => true, edit: (_, c) => void c.blocked_by.push(c.task_id) },
  {
    name: 'blocked_by lists a child twice',
    when: (c) => c.blocked_by.length > 0,
    edit: (_, c) => void c.blocked_by.push(c.blocked_by[0]!),
  },
  {
    name: 'dependency cycle',
    when: (c) => c.blocked_by.length > 0,
    edit: (r, c, pick) => void byId(r, c.blocked_by[pick % c.blocked_by.length]!).blocked_by.push(c.task_id),
  },
  {
    name: 'updated_at before created_at',
    whole: () => true,
    edit: (r) => void (r.updated_at = new Date(Date.parse(r.created_at) - 1000).toISOString()),
  },
  { name: 'malformed timestamp', whole: () => true, edit: (r) => void (r.updated_at = 'yesterday') },
  {
    name: 'wrong contract',
    whole: () => true,
    edit: (r) => void ((r as { contract: string }).contract = 'lanes/batch/v0'),
  },
  { name: 'no children', whole: () => true, edit: (r) => void (r.children = []) },
  {
    name: 'unknown child state',
    when: () => true,
    edit: (_, c) => void ((c as { state: string }).state = 'running'),
  },
  {
    name: 'unknown child field',
    when: () => true,
    edit: (_, c) => void ((c as unknown as Record<string, unknown>).extra = 1),
  },
];

describe('a single illegal mutation of a sound record', () => {
  it('is always caught', () => {
    fc.assert(
      fc.property(scenarioArb, fc.nat(), (s, pick) => {
        const sound = play(s, () => {});
        expect(problemsOf(sound)).toEqual([]);
        for (const m of MUTATIONS) {
          let chosen = -1;
          if (m.when) {
            const fits = sound.children.flatMap((c, i) => (m.when!(c, sound) ? [i] : []));
            if (fits.length === 0) continue;
            chosen = fits[pick % fits.length]!;
          } else if (!m.whole!(sound)) continue;
          const broken = structuredClone(sound);
          m.edit(broken, broken.children[chosen]!, pick);
          bump(mutationsSeen, m.name);
          if (problemsOf(broken).length === 0)
            throw new Error(
              `not caught: ${m.name}` +
                (chosen >= 0 ? ` (child ${sound.children[chosen]!.task_id})` : '') +
                `\n${JSON.stringify(broken, null, 1)}`,
            );
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });

  afterAll(() => {
    // Every mutation's precondition held somewhere, so each one was really tried.
    for (const m of MUTATIONS) expect(mutationsSeen.get(m.name) ?? 0, m.name).toBeGreaterThan(0);
  });
});
