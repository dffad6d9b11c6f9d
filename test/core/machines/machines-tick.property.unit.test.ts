import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lanesRunning, machineOf } from '../../../src/core/machines/machines.js';
import { IN_FLIGHT_STATES } from '../../../src/core/records/record.js';
import { tick } from '../../../src/core/tick/tick.js';
import { memoryLane, memoryPlan, memoryPorts } from '../../helpers/memory-ports.js';
import { preparedRecord, SHA } from '../../helpers/records.js';

// The tick with machines, as a property (docs/DECISIONS.md, "Machines: placement"): whatever
// lanes are offered from whichever machine, tick after tick, with machines going away and
// coming back, the record never holds more lanes on a machine than its slots, nor more in
// flight than max_parallel, a pinned child's lane is only ever on its pin, and nothing is
// admitted from a machine that is away.

const POOL = [
  { name: 'local', slots: 1 },
  { name: 'box-a', slots: 2 },
  { name: 'box-b', slots: 1 },
];
const NAMES = [...POOL.map((m) => m.name), 'box-z'];
const IDS = ['T1', 'T2', 'T3', 'T4', 'T5', 'T6'];

const stepArb = fc.record({
  offers: fc.uniqueArray(fc.record({ task: fc.constantFrom(...IDS), machine: fc.constantFrom(...NAMES) }), {
    selector: (o) => o.task,
    maxLength: 4,
  }),
  away: fc.subarray(POOL.map((m) => m.name)),
  lost: fc.boolean(),
});

describe('the tick with machines, as a property', () => {
  it('never over slots or max_parallel, pins honoured, nothing admitted from a machine away', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(stepArb, { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 1, max: 5 }),
        fc.dictionary(fc.constantFrom(...IDS), fc.constantFrom(...POOL.map((m) => m.name)), { maxKeys: 3 }),
        async (steps, maxParallel, pins) => {
          const record = preparedRecord('b1', Object.fromEntries(IDS.map((id) => [id, []])));
          const plan = memoryPlan('b1', IDS, maxParallel);
          for (const child of plan.children) if (pins[child.id]) child.machine = pins[child.id];
          const ports = memoryPorts({ ...record, max_parallel: maxParallel }, plan);
          for (const step of steps) {
            const before = new Map(ports.store.record.children.map((c) => [c.task_id, c.state]));
            const offers = step.offers.map((o) => ({
              task_id: o.task,
              path: memoryLane(ports, o.task, ports.git.tips.get('batch/b1') ?? SHA(1)),
              machine: o.machine,
            }));
            const away = step.lost ? { lostMachines: step.away } : { unreachableMachines: step.away };
            await tick(ports, { machines: POOL, offers, ...away });
            const now = ports.store.record;
            const running = lanesRunning(now);
            let total = 0;
            for (const m of POOL) {
              expect(running.get(m.name) ?? 0).toBeLessThanOrEqual(m.slots);
              total += running.get(m.name) ?? 0;
            }
            expect([...running.keys()].every((name) => POOL.some((m) => m.name === name))).toBe(true);
            expect(total).toBeLessThanOrEqual(maxParallel);
            for (const child of now.children) {
              if (child.lane === null) continue;
              const pin = pins[child.task_id];
              if (pin) expect(machineOf(child)).toBe(pin);
              const admittedNow = before.get(child.task_id) === 'pending';
              if (admittedNow) expect(step.away).not.toContain(machineOf(child));
              if (step.lost && step.away.includes(machineOf(child)))
                expect(IN_FLIGHT_STATES.has(child.state) && child.state !== 'lane_committed').toBe(false);
            }
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
