import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { parsePlanText } from '../../src/core/plan/plan.js';
import type { BatchRecord } from '../../src/core/records/record.js';
import { nextToStart, startableChildren } from '../../src/core/steps/schedule.js';
import { admitLane, enroll } from '../../src/core/records/transitions.js';
import { preparedRecord, SHA } from '../helpers/records.js';

// Which children take the free slots now, and which take the next ones (the lanes the
// coordinator makes ahead, DESIGN §7): the same rules, a larger cap. No git, no processes.

const child = (id: string, scope: string, deps: string[] = []) =>
  `  - { id: ${id}, goal: ${id}, scope: [${scope}], blocked_by: [${deps.join(', ')}], acceptance: [{ id: c, run: "true" }], executor: script, run: "true" }`;

const plan = parsePlanText(
  [
    'batch: b1',
    'max_parallel: 2',
    'children:',
    child('A', 'a.txt'),
    child('B', 'b.txt'),
    child('C', 'a.txt'), // overlaps A
    child('D', 'd.txt', ['A']), // waits for A
    child('E', 'e.txt'),
    child('F', 'f.txt'),
    child('G', 'g.txt'),
  ].join('\n'),
  'plan.yaml',
  YAML,
);

const deps = { A: [], B: [], C: [], D: ['A'], E: [], F: [], G: [] };
const running = (): BatchRecord => ({ ...preparedRecord('b1', deps), batch_state: 'running' });
const lane = (id: string) => ({ path: `/lanes/b1/${id}`, branch: `lane/b1/${id}`, base_head: SHA(1) });
const inFlight = (r: BatchRecord, id: string) => enroll(admitLane(r, id, lane(id)), id, `run-${id}`);

describe('the children that take the next slots', () => {
  it('come after the ones startable now, in plan order, skipping overlapping scopes and unmet dependencies', () => {
    const r = running();
    expect(startableChildren(r, plan)).toEqual(['A', 'B']);
    // C overlaps A (taken now), D waits for A: neither can take a slot that frees next.
    expect(nextToStart(r, plan, 2)).toEqual(['E', 'F']);
    expect(nextToStart(r, plan, 3)).toEqual(['E', 'F', 'G']);
  });

  it('count the children in flight: with every slot taken, the next ones are the first startable', () => {
    const r = inFlight(inFlight(running(), 'A'), 'B');
    expect(startableChildren(r, plan)).toEqual([]);
    expect(nextToStart(r, plan, 2)).toEqual(['E', 'F']);
  });

  it('stay within the child budget', () => {
    const r = { ...running(), budget: { max_children: 3, qa_failure_limit: 3 } };
    expect(nextToStart(r, plan, 4)).toEqual(['E']);
    const spent = inFlight(inFlight(inFlight(r, 'A'), 'B'), 'E');
    expect(nextToStart(spent, plan, 4)).toEqual([]);
  });
});
