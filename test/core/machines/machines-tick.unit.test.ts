import { describe, expect, it } from 'vitest';
import { startAttempt } from '../../../src/core/records/kernel.js';
import { childAdvice } from '../../../src/core/ways-out/next-steps.js';
import { batchRecordSchema, checkRecordInvariants } from '../../../src/core/records/record.js';
import { reportSchema } from '../../../src/core/records/report.js';
import type { Handoff, Report } from '../../../src/core/records/report.js';
import { tick } from '../../../src/core/tick/tick.js';
import type { TickInput } from '../../../src/core/tick/tick.js';
import { memoryLane, memoryPlan, memoryPorts } from '../../helpers/memory-ports.js';
import type { MemoryPorts } from '../../helpers/memory-ports.js';
import { preparedRecord, SHA } from '../../helpers/records.js';

// The tick with machines (docs/DECISIONS.md, "Machines: placement"), ports in memory: where
// the provision handoffs send each child, what the record keeps, and what becomes of the
// lanes of a machine that does not answer (reconnecting) or is gone (lost).

const POOL = [
  { name: 'local', slots: 1 },
  { name: 'box-a', slots: 2 },
];
const kinds = (r: Report) => r.handoffs.map((h) => `${h.action}:${h.task_id}`);
const provisions = (r: Report) =>
  r.handoffs
    .filter((h): h is Extract<Handoff, { action: 'provision' }> => h.action === 'provision')
    .map((h) => `${h.task_id}@${h.machine}`);
const stateOf = (ports: MemoryPorts, id: string) =>
  ports.store.record.children.find((c) => c.task_id === id)!;

function batch(
  ids = ['T1', 'T2', 'T3', 'T4'],
  maxParallel = 3,
  pins: Record<string, string> = {},
): MemoryPorts {
  const record = preparedRecord('b1', Object.fromEntries(ids.map((id) => [id, []])));
  const plan = memoryPlan('b1', ids, maxParallel);
  for (const child of plan.children) if (pins[child.id]) child.machine = pins[child.id];
  return memoryPorts({ ...record, max_parallel: maxParallel }, plan);
}

/** T2's lane offered from box-a and enrolled, an attempt open in its kernel (an agent at work). */
async function enrolledOnBoxA(ports: MemoryPorts, input: TickInput): Promise<string> {
  await tick(ports, input);
  const path = memoryLane(ports, 'T2', SHA(1));
  await tick(ports, { ...input, offers: [{ task_id: 'T2', path, machine: 'box-a' }] });
  const start = {
    host: 'machine',
    paneId: null,
    pid: null,
    pidStart: null,
    statusPath: null,
    sessionId: null,
  };
  const kernel = ports.store.kernels.get('T2')!;
  ports.store.writeKernel(
    startAttempt(kernel, { ...start, hookTokenSha256: null }, ports.clock.now().toISOString()),
  );
  return path;
}

describe('placement in the tick', () => {
  it('without machines: every provision is local and nothing of machines is written (as before)', async () => {
    const ports = batch();
    const report = await tick(ports, {});
    expect(provisions(report)).toEqual(['T1@local', 'T2@local', 'T3@local']);
    expect(report.machines).toBeUndefined();
    const path = memoryLane(ports, 'T1', SHA(1));
    await tick(ports, { offers: [{ task_id: 'T1', path }] });
    expect(stateOf(ports, 'T1')).toMatchObject({ state: 'enrolled' });
    expect(Object.keys(stateOf(ports, 'T1'))).not.toContain('machine');
  });

  it('with a pool: each provision names its machine, the least loaded first; the report shows the machines', async () => {
    const ports = batch();
    const report = await tick(ports, { machines: POOL });
    // local 0/1 first (config order), then box-a twice (0/2, 1/2 < 1/1); max_parallel 3
    expect(provisions(report)).toEqual(['T1@local', 'T2@box-a', 'T3@box-a']);
    expect(report.machines).toEqual([
      { name: 'local', slots: 1, running: 0, state: 'ready' },
      { name: 'box-a', slots: 2, running: 0, state: 'ready' },
    ]);
    expect(reportSchema.parse(report)).toEqual(report);
  });

  it('a lane offered from its machine is admitted and the record keeps the machine; one from a machine that cannot take it is refused', async () => {
    const ports = batch(['T1', 'T2', 'T3', 'T4'], 4);
    await tick(ports, { machines: POOL });
    const offers = [
      { task_id: 'T1', path: memoryLane(ports, 'T1', SHA(1)), machine: 'box-a' },
      { task_id: 'T2', path: memoryLane(ports, 'T2', SHA(1)), machine: 'box-a' },
      { task_id: 'T3', path: memoryLane(ports, 'T3', SHA(1)), machine: 'box-a' }, // (box-a is full by then)
      // (no slot is left for T4 once T3 is placed on local: it may not start, whatever the machine)
      { task_id: 'T4', path: memoryLane(ports, 'T4', SHA(1)), machine: 'box-z' },
    ];
    const report = await tick(ports, { machines: POOL, offers });
    expect(report.lane_refusals.map((r) => `${r.task_id}:${r.reason}`)).toEqual([
      'T3:batch_lane_wrong_machine',
      'T4:batch_lane_unknown_child',
    ]);
    expect(stateOf(ports, 'T1')).toMatchObject({ state: 'enrolled', machine: 'box-a' });
    expect(stateOf(ports, 'T2')).toMatchObject({ state: 'enrolled', machine: 'box-a' });
    // the one slot left is local's: the next provisions go there
    expect(provisions(report)).toEqual(['T3@local']);
    expect(report.machines?.map((m) => m.running)).toEqual([0, 2]);
    expect(checkRecordInvariants(ports.store.record)).toEqual([]);
    expect(batchRecordSchema.parse(ports.store.record)).toEqual(ports.store.record);
  });

  it("a child's pin: it waits for a slot there and is never provisioned elsewhere; the lane is made ahead there", async () => {
    const ports = batch(['T1', 'T2', 'T3'], 3, { T1: 'local', T2: 'local' });
    const report = await tick(ports, { machines: POOL, coordinated: true });
    expect(provisions(report)).toEqual(['T1@local', 'T3@box-a']);
    expect(kinds(report)).toContain('make-ahead:T2');
    expect(report.handoffs.find((h) => h.action === 'make-ahead')).toMatchObject({ machine: 'local' });
  });

  it('a pin to a machine the pool does not have (left out): the child parks naming it', async () => {
    const ports = batch(['T1', 'T2'], 2, { T2: 'box-b' });
    const report = await tick(ports, { machines: POOL });
    expect(stateOf(ports, 'T2')).toMatchObject({ state: 'needs_human', reason: 'machine_left_out: box-b' });
    expect(provisions(report)).toEqual(['T1@local']);
  });
});

describe('a machine that does not answer', () => {
  it('reconnecting: its lanes are not observed, committed or counted, and get nothing new; back, they go on', async () => {
    const ports = batch(['T1', 'T2', 'T3', 'T4'], 3);
    const path = await enrolledOnBoxA(ports, { machines: POOL });
    ports.failing.add('T2:ok');
    ports.store.writeKernel({ ...ports.store.kernels.get('T2')!, next_obligation: 'run_qa' });
    const away = await tick(ports, { machines: POOL, unreachableMachines: ['box-a'] });
    expect(stateOf(ports, 'T2')).toMatchObject({ state: 'enrolled', qa_failures: 0 });
    expect(ports.store.kernels.get('T2')!.qa_runs).toEqual([]);
    expect(away.machines?.find((m) => m.name === 'box-a')).toMatchObject({
      state: 'reconnecting',
      running: 1,
    });
    expect(provisions(away).every((p) => p.endsWith('@local'))).toBe(true);
    expect(away.batch_state).toBe('running');
    // back: QA runs on it (and fails, counted once)
    await tick(ports, { machines: POOL });
    expect(stateOf(ports, 'T2')).toMatchObject({ state: 'enrolled', qa_failures: 1 });
    expect(path).toBe('/lanes/T2');
  });

  it('a lane offered from a machine gone away meanwhile is refused without asking that machine for its facts', async () => {
    const ports = batch(['T1', 'T2'], 2, { T2: 'box-a' });
    await tick(ports, { machines: POOL });
    const path = memoryLane(ports, 'T2', SHA(1));
    const asked: string[] = [];
    const facts = ports.git.offerFacts.bind(ports.git);
    ports.git.offerFacts = async (p: string) => {
      asked.push(p);
      return facts(p);
    };
    const report = await tick(ports, {
      machines: POOL,
      unreachableMachines: ['box-a'],
      offers: [{ task_id: 'T2', path, machine: 'box-a' }],
    });
    expect(asked).toEqual([]); // (an op there would only wait, then fail the tick)
    // (its pinned machine away, T2 is not among the children placed now: refused and left alone)
    expect(report.lane_refusals.map((r) => [r.task_id, r.reason])).toEqual([
      ['T2', 'batch_lane_unknown_child'],
    ]);
    expect(stateOf(ports, 'T2').state).toBe('pending');
  });

  it('every machine away and nothing in flight: the batch waits, it does not stop', async () => {
    const ports = batch(['T1'], 1);
    const report = await tick(ports, { machines: POOL, unreachableMachines: ['local', 'box-a'] });
    expect(report.batch_state).toBe('running');
    expect(provisions(report)).toEqual([]);
    // (a pool of remote machines only, the one lost)
    const lost = await tick(ports, { machines: [POOL[1]!], lostMachines: ['box-a'] });
    expect(lost.batch_state).toBe('running');
    // back: T1 starts
    expect(provisions(await tick(ports, { machines: POOL }))).toEqual(['T1@local']);
  });

  it('lost: its lanes in flight park machine_lost, a resume while it is gone keeps them parked', async () => {
    const ports = batch(['T1', 'T2', 'T3', 'T4'], 3);
    await enrolledOnBoxA(ports, { machines: POOL });
    const lost = await tick(ports, { machines: POOL, lostMachines: ['box-a'] });
    expect(stateOf(ports, 'T2')).toMatchObject({
      state: 'needs_human',
      reason: 'machine_lost: box-a',
      machine: 'box-a',
    });
    expect(lost.machines?.find((m) => m.name === 'box-a')?.state).toBe('lost');
    expect(childAdvice(ports.store.record, stateOf(ports, 'T2'))).toBe(
      'T2: resume once machine box-a is back (lanes resume b1 --approve), start it again on another machine (lanes resume b1 --approve --move T2=<machine>), or drop it (lanes drop b1 T2)',
    );
    const approval = { confirmationTime: '2026-12-01T00:00:00.000Z' };
    await tick(ports, { machines: POOL, lostMachines: ['box-a'], approval });
    expect(stateOf(ports, 'T2')).toMatchObject({ state: 'needs_human', reason: 'machine_lost: box-a' });
  });

  it('lost, then back: resume --approve takes the lane up where it is', async () => {
    const ports = batch(['T1', 'T2', 'T3', 'T4'], 3);
    await enrolledOnBoxA(ports, { machines: POOL });
    await tick(ports, { machines: POOL, lostMachines: ['box-a'] });
    const approval = { confirmationTime: '2026-12-01T00:00:00.000Z' };
    await tick(ports, { machines: POOL, approval });
    // (looked at again by QA on its lane there, which passes: integrated from that lane)
    expect(stateOf(ports, 'T2')).toMatchObject({ state: 'integrated', machine: 'box-a', reason: null });
    expect(stateOf(ports, 'T2').lane?.path).toBe('/lanes/T2');
  });

  it('resume --move: the child starts again from its base on the machine named; its old lane is not touched', async () => {
    const ports = batch(['T1', 'T2', 'T3', 'T4'], 3);
    const old = await enrolledOnBoxA(ports, { machines: POOL });
    await tick(ports, { machines: POOL, lostMachines: ['box-a'] });
    const approval = {
      confirmationTime: '2026-12-01T00:00:00.000Z',
      moves: [{ task_id: 'T2', machine: 'local' }],
    };
    const roomy = [{ name: 'local', slots: 2 }, POOL[1]!];
    const report = await tick(ports, { machines: roomy, lostMachines: ['box-a'], approval });
    expect(stateOf(ports, 'T2')).toMatchObject({
      state: 'pending',
      lane: null,
      machine: 'local',
      reason: null,
    });
    expect(provisions(report)).toContain('T2@local');
    expect(provisions(report)).not.toContain('T2@box-a');
    // (the record keeps where the old lane is, so its work is brought home before box-a's things go)
    expect(stateOf(ports, 'T2').left_lanes).toEqual([
      { machine: 'box-a', path: old, branch: 'lane/b1/T2', base_head: expect.any(String) },
    ]);
    expect(ports.git.lanes.has(old)).toBe(true);
    expect(ports.store.events.find((e) => e.event === 'moved')?.fields).toMatchObject({
      task: 'T2',
      from: 'box-a',
      to: 'local',
      lane_path: old,
    });
    // admitted on local: the record says local by having no machine
    const path = '/local-lanes/T2';
    ports.git.lanes.set(path, { branch: 'lane/b1/T2', head: SHA(1), clean: true, changed: ['T2/x'] });
    await tick(ports, {
      machines: roomy,
      lostMachines: ['box-a'],
      offers: [{ task_id: 'T2', path, machine: 'local' }],
    });
    expect(stateOf(ports, 'T2')).toMatchObject({ state: 'enrolled', lane: { path } });
    expect(ports.store.kernels.get('T2')!.lane_path).toBe(path);
    expect(Object.keys(stateOf(ports, 'T2'))).not.toContain('machine');
  });

  it('resume --move to a machine that is away, or of a child that is not parked: exit 2, nothing written', async () => {
    const ports = batch(['T1', 'T2', 'T3', 'T4'], 3);
    await enrolledOnBoxA(ports, { machines: POOL });
    await tick(ports, { machines: POOL, lostMachines: ['box-a'] });
    const before = structuredClone(ports.store.record);
    const at = '2026-12-01T00:00:00.000Z';
    for (const [moves, message] of [
      [[{ task_id: 'T2', machine: 'box-a' }], 'machine "box-a" does not answer now'],
      [[{ task_id: 'T1', machine: 'box-a' }], 'child T1 is pending; only a parked child is moved'],
      [[{ task_id: 'T2', machine: 'box-q' }], '"box-q" is not a machine of lanes.config.json'],
    ] as const) {
      const approval = { confirmationTime: at, moves: [...moves] };
      await expect(tick(ports, { machines: POOL, lostMachines: ['box-a'], approval })).rejects.toMatchObject({
        exitCode: 2,
        message: expect.stringContaining(message),
      });
      expect(ports.store.record).toEqual(before);
    }
  });
});

describe('a tick told of no machines', () => {
  it('leaves a lane on a machine alone (it cannot see it), rather than parking it as gone', async () => {
    const ports = batch(['T1', 'T2', 'T3', 'T4'], 3);
    await enrolledOnBoxA(ports, { machines: POOL });
    // (the lane's path is not one the coordinator's git knows)
    ports.git.lanes.delete('/lanes/T2');
    await tick(ports, {});
    expect(stateOf(ports, 'T2')).toMatchObject({ state: 'enrolled', machine: 'box-a', reason: null });
  });
});

describe('old files', () => {
  it('a report from before machines (provision and make-ahead without one) parses, as local', () => {
    const old = {
      batch_id: 'b1',
      batch_state: 'running',
      max_parallel: 2,
      children: preparedRecord('b1', { T1: [] }).children,
      commits: [],
      reason: null,
      handoffs: [
        { action: 'provision', task_id: 'T1', lane_branch: 'lane/b1/T1', base_head: SHA(1) },
        { action: 'make-ahead', task_id: 'T1', lane_branch: 'lane/b1/T1' },
      ],
      lane_refusals: [],
      next_action: 'x',
      created_at: '2026-11-29T10:00:00.000Z',
    };
    const parsed = reportSchema.parse(old);
    expect(parsed.handoffs.map((h) => (h as { machine?: string }).machine)).toEqual(['local', 'local']);
    expect(parsed.machines).toBeUndefined();
  });
});
