import fc from 'fast-check';
import { cleanup, render } from 'ink-testing-library';
import { afterEach, describe, expect, it } from 'vitest';
import { LaneList, laneListWidth } from '../../components/LaneList.js';
import { CHILD_STATES } from '../../src/core/records/record.js';
import { rowColumns, rowParts } from '../../src/tui/lane-row.js';
import type { LaneRow } from '../../src/tui/tui-store.js';
import { formatTokens } from '../../src/tui/usage-text.js';
import { plain, row } from '../helpers/tui.js';

// A lane's row at 80 columns (a list of 28) keeps its tokens whole (issue 27: "every lane's
// row shows the tokens the server reported", at 80×24 as at 200×60): with a health tag and
// a QA failure count beside them, the row gives way elsewhere first (the tag's short word,
// the state's short word, the machine, the word "qa", a narrower id column), and it still
// fits the list, never cut at its edge. Fails on the old row (its tokens went to Ink's "…").

afterEach(() => cleanup());

const DRIFT = { waiting: false, stalled: false, drift: ['README.md'] };
const STALL = { waiting: false, stalled: true, drift: [] };
const WAIT = { waiting: true, stalled: false, drift: [] };
const used = (input: number, output: number) => ({
  input_tokens: input,
  output_tokens: output,
  cost_usd: null,
});
const tokens = (r: LaneRow) => String(r.usage!.input_tokens + r.usage!.output_tokens);

/** The list's lines at `width`, each checked to fit it without Ink's cut ("…"). */
function lines(rows: LaneRow[], width: number, selected = 0): string[] {
  const ui = render(<LaneList rows={rows} selected={selected} now={65_000} width={width} height={20} />);
  const out = plain(ui.lastFrame()!).split('\n');
  for (const line of out) expect([...line].length).toBeLessThanOrEqual(width);
  // (the selected lane's lines below its row may be cut at the edge; a row never is)
  for (const line of out.filter((l) => /^[ ›] \S/.test(l))) expect(line).not.toContain('…');
  return out;
}

const rowOf = (out: string[], id: string) => out.find((l) => l.slice(2).startsWith(`${id} `))!;

/** A live lane with a tag, a QA failure and tokens. */
const liveLane = () =>
  row('a', {
    state: 'enrolled',
    attempt: 2,
    qaFailures: 1,
    startedAt: 0,
    usage: used(200, 23),
    health: DRIFT,
  });

describe('a lane’s row at 80 columns', () => {
  it('a live lane with a tag, QA failures and tokens keeps the tokens whole', () => {
    // (the scripted model server's few tokens an answer: exact figures, not "3.9k")
    const live = liveLane();
    const out = lines(
      [live, row('b'), row('c', { state: 'enrolled', attempt: 1, startedAt: 0 })],
      laneListWidth(80),
    );
    expect(rowOf(out, 'a')).toMatch(new RegExp(`^› a +\\S+ +drift .*qa✗1 ${tokens(live)}$`));
  });

  it('keeps every lane’s tokens whole beside a parked lane, long ids and machines', () => {
    const rows = [
      row('add', {
        state: 'enrolled',
        attempt: 2,
        qaFailures: 3,
        startedAt: 0,
        usage: used(11_900, 445),
        health: STALL,
      }),
      row('sqrt', { state: 'needs_human', attempt: 3, qaFailures: 2, usage: used(3700, 170), health: WAIT }),
      row('integrate-the-calculator', {
        state: 'lane_committed',
        attempt: 1,
        qaFailures: 12,
        usage: used(880, 99),
        health: DRIFT,
      }),
      row('b', { state: 'released', attempt: 1, startedAt: 0, endedAt: 12_000, usage: used(20, 3) }),
    ];
    for (const machines of [false, true]) {
      const list = machines
        ? rows.map((r, i) => ({ ...r, machine: i % 2 ? 'build-server-7' : 'box-a' }))
        : rows;
      const out = lines(list, laneListWidth(80), 3);
      expect(rowOf(out, 'add')).toMatch(/ qa✗3 12k$/);
      expect(rowOf(out, 'sqrt')).toMatch(/ qa✗2 3\.9k$/);
      expect(out.find((l) => l.slice(2).startsWith('integ'))).toMatch(/ (qa)?✗12 979$/);
      expect(rowOf(out, 'b')).toMatch(/ 23( |$)/);
    }
  });

  it('a wide list (96 columns and up) is as before: the whole tag, the word "tok" and the time where they fit', () => {
    const live = liveLane();
    const done = row('b', {
      state: 'released',
      attempt: 1,
      startedAt: 0,
      endedAt: 12_000,
      usage: used(3700, 170),
    });
    const out = lines([live, done], laneListWidth(120), 1);
    expect(rowOf(out, 'a')).toBe('  a    enrolled scope drift #2 qa✗1 223');
    expect(rowOf(out, 'b')).toBe('› b    released  #1 3.9k tok 12s');
  });
});

const HEALTH = [null, WAIT, STALL, DRIFT];
const anyRow = fc
  .record({
    id: fc.stringMatching(/^[a-z][a-z0-9-]{0,19}$/),
    state: fc.constantFrom(...CHILD_STATES),
    attempt: fc.nat(12),
    qaFailures: fc.constantFrom(0, 1, 3, 12),
    started: fc.boolean(),
    tokens: fc.option(fc.constantFrom(0, 23, 999, 3870, 12_345, 123_456, 1_234_567, 123_456_789)),
    health: fc.constantFrom(...HEALTH),
    reviewPending: fc.boolean(),
    machine: fc.constantFrom(undefined, 'box-a', 'build-server-7'),
  })
  .map(({ id, started, tokens, ...r }) =>
    row(id, { ...r, startedAt: started ? 0 : null, usage: tokens === null ? null : used(tokens, 0) }),
  );

describe('every row, in every width the list takes (28 to 44 columns)', () => {
  it('fits the list and keeps its tokens whole', () => {
    const lists = fc.uniqueArray(anyRow, { minLength: 1, maxLength: 8, selector: (r) => r.taskId });
    fc.assert(
      fc.property(lists, fc.integer({ min: 28, max: 44 }), fc.nat(7), (rows, width, selected) => {
        const columns = rowColumns(rows, width);
        for (const [i, r] of rows.entries()) {
          const p = rowParts(r, columns, width, r.startedAt === null ? '' : '1m05s');
          const line = `${i === selected ? '›' : ' '} ${p.id}${p.state}${p.tag?.text ?? ''}${p.machine}${p.tail}`;
          expect([...line].length).toBeLessThanOrEqual(width);
          expect(line.startsWith(`${i === selected ? '›' : ' '} ${r.taskId.slice(0, 4)}`)).toBe(true);
          if (r.usage) expect(` ${p.tail} `).toContain(` ${formatTokens(r.usage.input_tokens)} `);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
