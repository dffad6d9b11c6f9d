import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { machineRefusal, placeChildren } from '../../../src/core/machines/placement.js';
import type { PlacementInput } from '../../../src/core/machines/placement.js';

// Which child starts on which machine (docs/DECISIONS.md, "Machines: placement"): examples
// of each rule, then the rules as properties over random pools, loads and pins.

const machines = [
  { name: 'local', slots: 2 },
  { name: 'box-a', slots: 4 },
  { name: 'box-b', slots: 4 },
];
const input = (over: Partial<PlacementInput>): PlacementInput => ({
  ready: [],
  machines,
  running: new Map(),
  maxParallel: 100,
  unavailable: new Set(),
  ...over,
});
const ready = (...ids: string[]) => ids.map((task_id) => ({ task_id }));

describe('placement, by example', () => {
  it('the least loaded machine first (the share of its slots in use), ties in config order', () => {
    const placed = placeChildren(input({ ready: ready('T1', 'T2', 'T3', 'T4', 'T5') }));
    // all empty: local (first); then box-a, box-b (0/4 < 1/2); then box-a, box-b (1/4 < 1/2)
    expect(placed).toEqual([
      { task_id: 'T1', machine: 'local' },
      { task_id: 'T2', machine: 'box-a' },
      { task_id: 'T3', machine: 'box-b' },
      { task_id: 'T4', machine: 'box-a' },
      { task_id: 'T5', machine: 'box-b' },
    ]);
  });

  it('counts the lanes each machine runs already', () => {
    const running = new Map([
      ['local', 2],
      ['box-a', 3],
    ]);
    expect(placeChildren(input({ ready: ready('T1', 'T2'), running }))).toEqual([
      { task_id: 'T1', machine: 'box-b' },
      { task_id: 'T2', machine: 'box-b' },
    ]);
  });

  it('max_parallel bounds the batch, the lanes in flight on every machine counted', () => {
    const running = new Map([['box-a', 2]]);
    expect(placeChildren(input({ ready: ready('T1', 'T2', 'T3'), running, maxParallel: 3 }))).toEqual([
      { task_id: 'T1', machine: 'local' },
    ]);
  });

  it('a pin is honoured: it waits while its machine is full, and the children after it go on', () => {
    const running = new Map([['box-b', 4]]);
    const placed = placeChildren(
      input({ ready: [{ task_id: 'T1', pin: 'box-b' }, { task_id: 'T2' }], running }),
    );
    expect(placed).toEqual([{ task_id: 'T2', machine: 'local' }]);
    // with a free slot there, it goes there even though another machine is emptier
    const freed = placeChildren(
      input({ ready: [{ task_id: 'T1', pin: 'box-b' }], running: new Map([['box-b', 3]]) }),
    );
    expect(freed).toEqual([{ task_id: 'T1', machine: 'box-b' }]);
  });

  it('machines unreachable, lost or left out get nothing; a child pinned there waits', () => {
    const unavailable = new Set(['local', 'box-a']);
    expect(
      placeChildren(input({ ready: [{ task_id: 'T1', pin: 'box-a' }, ...ready('T2', 'T3')], unavailable })),
    ).toEqual([
      { task_id: 'T2', machine: 'box-b' },
      { task_id: 'T3', machine: 'box-b' },
    ]);
    expect(
      placeChildren(input({ ready: ready('T1'), unavailable: new Set(machines.map((m) => m.name)) })),
    ).toEqual([]);
    // (a pin to a machine the pool does not have: never placed)
    expect(placeChildren(input({ ready: [{ task_id: 'T1', pin: 'gone' }] }))).toEqual([]);
  });

  it('a lane offered from a machine is admitted only where placement could have put it', () => {
    const base = { machines, running: new Map([['box-a', 4]]), unavailable: new Set(['box-b']) };
    expect(machineRefusal('local', undefined, base)).toBeNull();
    expect(machineRefusal('box-a', undefined, base)).toBe('machine "box-a" has no free slot');
    expect(machineRefusal('box-b', undefined, base)).toBe('machine "box-b" is not available');
    expect(machineRefusal('local', 'box-a', base)).toBe('the child runs on machine "box-a", not "local"');
    expect(machineRefusal('elsewhere', undefined, base)).toBe(
      'machine "elsewhere" is not in the batch\'s pool',
    );
  });
});

const NAMES = ['local', 'm1', 'm2', 'm3', 'm4'];
const arbInput: fc.Arbitrary<PlacementInput> = fc
  .uniqueArray(fc.constantFrom(...NAMES), { minLength: 1, maxLength: 5 })
  .chain((names) =>
    fc.record({
      machines: fc.tuple(
        ...names.map((name) => fc.record({ name: fc.constant(name), slots: fc.integer({ min: 1, max: 5 }) })),
      ),
      running: fc.tuple(...names.map(() => fc.integer({ min: 0, max: 6 }))),
      unavailable: fc.subarray(names),
      pins: fc.array(fc.option(fc.constantFrom(...names, 'elsewhere'), { nil: undefined }), {
        maxLength: 14,
      }),
      maxParallel: fc.integer({ min: 1, max: 20 }),
    }),
  )
  .map(({ machines: ms, running, unavailable, pins, maxParallel }) => ({
    machines: ms,
    // (a machine may run more than its slots when they were lowered: it gets nothing more)
    running: new Map(ms.map((m, i) => [m.name, running[i]!])),
    unavailable: new Set(unavailable),
    maxParallel,
    ready: pins.map((pin, i) => (pin === undefined ? { task_id: `T${i}` } : { task_id: `T${i}`, pin })),
  }));

describe('placement, as properties', () => {
  it("never over a machine's slots, never over max_parallel, each child once", () => {
    fc.assert(
      fc.property(arbInput, (inp) => {
        const placed = placeChildren(inp);
        const inFlight = [...inp.running.values()].reduce((a, b) => a + b, 0);
        expect(placed.length).toBeLessThanOrEqual(Math.max(0, inp.maxParallel - inFlight));
        for (const m of inp.machines) {
          const added = placed.filter((p) => p.machine === m.name).length;
          if (added > 0) expect(inp.running.get(m.name)! + added).toBeLessThanOrEqual(m.slots);
        }
        expect(new Set(placed.map((p) => p.task_id)).size).toBe(placed.length);
      }),
    );
  });

  it('pins honoured, nothing on an unavailable machine, in the order the children came', () => {
    fc.assert(
      fc.property(arbInput, (inp) => {
        const placed = placeChildren(inp);
        const order = inp.ready.map((c) => c.task_id);
        expect(placed.map((p) => order.indexOf(p.task_id))).toEqual(
          [...placed.map((p) => order.indexOf(p.task_id))].sort((a, b) => a - b),
        );
        for (const p of placed) {
          const pin = inp.ready.find((c) => c.task_id === p.task_id)!.pin;
          if (pin !== undefined) expect(p.machine).toBe(pin);
          expect(inp.unavailable.has(p.machine)).toBe(false);
          expect(inp.machines.some((m) => m.name === p.machine)).toBe(true);
        }
      }),
    );
  });

  it('no slot left idle: a child not placed had no machine it may run on with a free slot', () => {
    fc.assert(
      fc.property(arbInput, (inp) => {
        const placed = placeChildren(inp);
        const inFlight = [...inp.running.values()].reduce((a, b) => a + b, 0);
        if (inFlight + placed.length >= inp.maxParallel) return;
        const load = new Map(inp.running);
        for (const p of placed) load.set(p.machine, load.get(p.machine)! + 1);
        for (const c of inp.ready) {
          if (placed.some((p) => p.task_id === c.task_id)) continue;
          const open = inp.machines.filter(
            (m) =>
              !inp.unavailable.has(m.name) &&
              load.get(m.name)! < m.slots &&
              (c.pin === undefined || c.pin === m.name),
          );
          expect(open).toEqual([]);
        }
      }),
    );
  });

  it('deterministic: the same input, the same placement', () => {
    fc.assert(
      fc.property(arbInput, (inp) => {
        expect(placeChildren(inp)).toEqual(placeChildren(inp));
      }),
    );
  });
});
