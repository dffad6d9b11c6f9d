import { describe, expect, it } from 'vitest';
import { startAttempt } from '../../../src/core/records/kernel.js';
import { reportSchema } from '../../../src/core/records/report.js';
import type { Handoff, Report } from '../../../src/core/records/report.js';
import { tick } from '../../../src/core/tick/tick.js';
import type { InFlight } from '../../../src/core/tick/tick.js';
import { memoryLane, memoryPlan, memoryPorts } from '../../helpers/memory-ports.js';
import type { MemoryPorts } from '../../helpers/memory-ports.js';
import { preparedRecord, SHA } from '../../helpers/records.js';

// The effects a tick asks for, as data (DESIGN §4, "Effects"): every kind, from events and
// a snapshot of what is in flight, with the ports in memory (no git, no processes).

const NONE: InFlight = { waitingTurns: [], reworkSent: [], sessions: [] };

function batch(): MemoryPorts {
  const record = preparedRecord('b1', { T1: [], T2: [], T3: [] });
  return memoryPorts(record, memoryPlan('b1', ['T1', 'T2', 'T3'], 2));
}

const kinds = (r: Report) => r.handoffs.map((h) => `${h.action}:${h.task_id}`);
const of = <A extends Handoff['action']>(r: Report, action: A) =>
  r.handoffs.filter((h): h is Extract<Handoff, { action: A }> => h.action === action);

/** T1's lane offered and enrolled, with an attempt open in its kernel (an agent at work). */
async function enrolledT1(ports: MemoryPorts): Promise<string> {
  await tick(ports, { coordinated: true });
  const path = memoryLane(ports, 'T1', SHA(1));
  await tick(ports, { coordinated: true, offers: [{ task_id: 'T1', path }] });
  const kernel = ports.store.kernels.get('T1')!;
  const start = { host: 'pty', paneId: null, pid: null, pidStart: null, statusPath: null, sessionId: 's-1' };
  ports.store.writeKernel(
    startAttempt(kernel, { ...start, hookTokenSha256: null }, ports.clock.now().toISOString()),
  );
  return path;
}

describe('the effects of a tick', () => {
  it('provision for the free slots, make-ahead for the children that take the next ones', async () => {
    const report = await tick(batch(), { coordinated: true });
    expect(kinds(report)).toEqual(['provision:T1', 'provision:T2', 'make-ahead:T3']);
    expect(of(report, 'make-ahead')).toEqual([
      { action: 'make-ahead', task_id: 'T3', lane_branch: 'lane/b1/T3', machine: 'local' },
    ]);
    // (counted by next_action as before: the coordinator's effects are not the reader's)
    expect(report.next_action).toBe('Act on the handoffs: 2 provision.');
  });

  it('no make-ahead while dispatch is paused, and none for `lanes tick` (not coordinated)', async () => {
    expect(kinds(await tick(batch(), { coordinated: true, dispatchPaused: true }))).toEqual([]);
    expect(kinds(await tick(batch()))).toEqual(['provision:T1', 'provision:T2']);
  });

  it('an executor for an admitted lane', async () => {
    const ports = batch();
    await tick(ports, { coordinated: true });
    const path = memoryLane(ports, 'T1', SHA(1));
    const report = await tick(ports, { coordinated: true, offers: [{ task_id: 'T1', path }] });
    expect(of(report, 'executor')).toMatchObject([
      { task_id: 'T1', lane_path: path, next_obligation: 'implement' },
    ]);
  });

  it('move-to-head for a lane refused for an older head, park-refused for one that cannot be used', async () => {
    const ports = batch();
    await tick(ports, { coordinated: true });
    const old = memoryLane(ports, 'T1', SHA(7));
    const dirty = memoryLane(ports, 'T2', SHA(1), { clean: false });
    const offers = [
      { task_id: 'T1', path: old },
      { task_id: 'T2', path: dirty },
    ];
    const report = await tick(ports, { coordinated: true, offers });
    expect(report.lane_refusals.map((r) => r.reason)).toEqual([
      'batch_lane_base_mismatch',
      'batch_lane_dirty',
    ]);
    expect(of(report, 'move-to-head')).toEqual([{ action: 'move-to-head', task_id: 'T1', lane_path: old }]);
    expect(of(report, 'park-refused')).toEqual([
      { action: 'park-refused', task_id: 'T2', reason: 'lane refused: batch_lane_dirty' },
    ]);
    // (the refusal itself writes nothing: the park comes back as a setup failure)
    expect(ports.store.record.children.find((c) => c.task_id === 'T2')!.state).toBe('pending');
  });

  it('a turn end that passes QA: the turn answered, head_moved handed out early, the session closed, the lane released', async () => {
    const ports = batch();
    const path = await enrolledT1(ports);
    const inFlight = {
      ...NONE,
      waitingTurns: [{ task_id: 'T1', attempt: 1, qa_runs_at_turn_end: 0 }],
      sessions: ['T1'],
    };
    const turnEnds = [{ task_id: 'T1', attempt: 1, session_id: 's-2' }];
    const report = await tick(ports, { coordinated: true, turnEnds, inFlight });
    const head = ports.git.tips.get('batch/b1')!;
    expect(report.children.find((c) => c.task_id === 'T1')!.state).toBe('integrated');
    expect(report.head_moved).toEqual({ head, integrated: 1 });
    expect(ports.movedEarly).toEqual([{ head, integrated: 1 }]);
    expect(of(report, 'answer-turn')).toEqual([
      {
        action: 'answer-turn',
        task_id: 'T1',
        attempt: 1,
        verdict: 'stop',
        feedback: null,
        why: 'passed',
        rework_key: '1|',
      },
    ]);
    expect(of(report, 'close-session')).toEqual([{ action: 'close-session', task_id: 'T1' }]);
    expect(of(report, 'release')).toMatchObject([{ task_id: 'T1', lane_path: path }]);
    // The turn end's one write: its session id and the turn, together.
    const attempt = ports.store.kernels.get('T1')!.attempts.at(-1)!;
    expect(attempt).toMatchObject({ session_id: 's-2', turns: 1 });
    expect(reportSchema.parse(report)).toEqual(report);
  });

  it('a turn end that fails QA is answered with the failing output; a rework later is typed in', async () => {
    const ports = batch();
    await enrolledT1(ports);
    ports.failing.add('T1:ok');
    const waiting = [{ task_id: 'T1', attempt: 1, qa_runs_at_turn_end: 0 }];
    const report = await tick(ports, {
      coordinated: true,
      turnEnds: [{ task_id: 'T1', attempt: 1 }],
      inFlight: { ...NONE, waitingTurns: waiting, sessions: ['T1'] },
    });
    const [answer] = of(report, 'answer-turn');
    expect(answer).toMatchObject({
      task_id: 'T1',
      attempt: 1,
      verdict: 'continue',
      why: null,
      rework_key: '1|',
    });
    expect(answer!.feedback).toContain('T1: ok failed');
    expect(of(report, 'close-session')).toEqual([]); // (still at work)
    // The agent waits at its prompt with an older rework: the newer one is typed in.
    const again = await tick(ports, {
      coordinated: true,
      inFlight: { ...NONE, reworkSent: [{ task_id: 'T1', rework_key: '0|' }], sessions: ['T1'] },
    });
    expect(of(again, 'answer-turn')).toMatchObject([{ task_id: 'T1', attempt: null, verdict: 'continue' }]);
    // Given that one already: nothing.
    const none = await tick(ports, {
      coordinated: true,
      inFlight: { ...NONE, reworkSent: [{ task_id: 'T1', rework_key: '1|' }] },
    });
    expect(of(none, 'answer-turn')).toEqual([]);
  });

  it('a turn still waiting for QA gets no answer', async () => {
    const ports = batch();
    await enrolledT1(ports);
    const inFlight = { ...NONE, waitingTurns: [{ task_id: 'T1', attempt: 1, qa_runs_at_turn_end: 0 }] };
    expect(of(await tick(ports, { coordinated: true, inFlight }), 'answer-turn')).toEqual([]);
  });

  it('a report from before the effects (the three old kinds, no head_moved) still parses', async () => {
    const report = await tick(batch());
    const old = { ...report } as Partial<Report>;
    delete old.head_moved;
    expect(Object.keys(old)).not.toContain('head_moved');
    expect(reportSchema.parse(old).handoffs.map((h) => h.action)).toEqual(['provision', 'provision']);
  });
});
