import { describe, expect, it } from 'vitest';
import type { Handoff, HeadMoved, Report } from '../../src/core/records/report.js';
import { Effects } from '../../src/coordinator/loop/effects.js';
import type { EffectDeps } from '../../src/coordinator/loop/effects.js';
import { preparedRecord } from '../helpers/records.js';

// The coordinator's one switch over the effects (coordinator/loop/effects.ts), with the
// lane jobs and the executors in memory: each kind goes where it belongs, in order.

function inMemory(paused = false) {
  const calls: string[] = [];
  let closing = 0;
  const deps: EffectDeps = {
    jobs: {
      headMoved: (head: string, n: number) => void calls.push(`head-moved ${head} ${n}`),
      moveToHead: (task: string, path: string) => void calls.push(`move-to-head ${task} ${path}`),
      fail: (f: { task_id: string; reason: string }) => void calls.push(`fail ${f.task_id} ${f.reason}`),
      provision: (h: { task_id: string }) => void calls.push(`provision ${h.task_id}`),
      keepAhead: (next: readonly { task_id: string }[]) =>
        void calls.push(`keep-ahead [${next.map((n) => n.task_id).join(',')}]`),
      releases: {
        release: (h: { task_id: string }, c: string) => void calls.push(`release ${h.task_id} ${c}`),
      },
    },
    runner: {
      paused,
      ensure: async (h: { task_id: string }) => (calls.push(`executor ${h.task_id}`), h.task_id === 'E2'),
      closeSession: (task: string) => void (calls.push(`close ${task}`), closing++),
      sessionsClosed: async () => void calls.push(`closed (${closing})`),
      turns: { answer: (h: { task_id: string }) => void calls.push(`answer ${h.task_id}`) },
    },
  };
  return { calls, effects: new Effects(deps) };
}

function report(handoffs: Handoff[], head_moved?: HeadMoved): Report {
  const record = preparedRecord('b1', { R: [] });
  record.children[0] = { ...record.children[0]!, state: 'integrated', commit: 'c-R' };
  return {
    batch_id: 'b1',
    batch_state: 'running',
    max_parallel: 2,
    children: record.children,
    commits: [],
    reason: null,
    handoffs,
    lane_refusals: [],
    next_action: '',
    created_at: '2026-11-29T10:00:00.000Z',
    ...(head_moved ? { head_moved } : {}),
  };
}

const EVERY: Handoff[] = [
  { action: 'make-ahead', task_id: 'M', lane_branch: 'lane/b1/M', machine: 'local' },
  { action: 'release', task_id: 'R', lane_branch: 'lane/b1/R', lane_path: '/l/R' },
  { action: 'provision', task_id: 'P', lane_branch: 'lane/b1/P', base_head: 'h', machine: 'local' },
  {
    action: 'executor',
    task_id: 'E2',
    run_id: 'r',
    lane_path: '/l/E2',
    lane_branch: 'lane/b1/E2',
    next_obligation: 'implement',
  },
  { action: 'park-refused', task_id: 'X', reason: 'lane refused: batch_lane_dirty' },
  { action: 'move-to-head', task_id: 'O', lane_path: '/l/O' },
  { action: 'close-session', task_id: 'R' },
  {
    action: 'answer-turn',
    task_id: 'A',
    attempt: 1,
    verdict: 'stop',
    feedback: null,
    why: 'passed',
    rework_key: '1|',
  },
];

describe('the coordinator carries out the effects', () => {
  it('every kind, each where it belongs: verdicts first, sessions closed before their lanes go', async () => {
    const { calls, effects } = inMemory();
    const again = await effects.carryOut(report(EVERY, { head: 'h2', integrated: 1 }));
    expect(calls).toEqual([
      'head-moved h2 1',
      'answer A',
      'close R',
      'fail X lane refused: batch_lane_dirty', // (the refused lanes in the report's order)
      'move-to-head O /l/O',
      'executor E2',
      'provision P',
      'closed (1)',
      'release R c-R',
      'keep-ahead [M]',
      'closed (1)',
    ]);
    expect(again).toBe(true); // (the executor handoff queued an exit)
  });

  it('a head_moved handed out early is not carried out again; the lanes made ahead are dropped while paused', async () => {
    const { calls, effects } = inMemory(true);
    effects.headMovedEarly({ head: 'h2', integrated: 2 });
    await effects.carryOut(report([EVERY[0]!], { head: 'h2', integrated: 2 }));
    expect(calls).toEqual(['head-moved h2 2', 'keep-ahead []', 'closed (0)']);
  });
});
