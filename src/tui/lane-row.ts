import type { ChildState, LaneRow } from './tui-store.js';
import { formatTokens, tokensOf } from './usage-text.js';

// A lane's row in the lane list: which of its words it keeps in the list's width. The row
// is `› id state tag @machine #attempt qa✗n tokens tok time`; where all do not fit, they
// give way in this order, the tokens never (issue 27: every lane's row shows the tokens its
// agent reported, at 80×24 as at 200×60): the word "tok", the time, the attempt, the tag's
// long words (`scope drift` → `drift`), the state's long words (`enrolled` → `enrol`), the
// machine (the selected lane's line names it), the word "qa" (`✗2`), all in this row only;
// then the id column's width (every row's: the columns stay aligned), then the tag. A list
// of 28 columns (an 80-column terminal, the narrowest the TUI makes) keeps the tokens whole.

/** The list's columns, the same in every row. */
export interface RowColumns {
  idWidth: number;
  /** The states' column: as wide as the longest state shown, so a row's tag starts where the others' do. */
  stateWidth: number;
  /** 0: a batch without machines. */
  machineWidth: number;
}

/** A row's parts after its selection mark, each as drawn ('' where it gave way). */
export interface RowParts {
  /** The id, cut or padded to its column, and the space after it. */
  id: string;
  state: string;
  tag: { text: string; color: string } | null;
  machine: string;
  tail: string;
}

interface HealthTag {
  text: string;
  short: string;
  color: string;
}

/** Each state in at most six characters, for a row that has no room for its whole word. */
const SHORT_STATE: Record<ChildState, string> = {
  pending: 'pend',
  lane_admitted: 'admit',
  enrolled: 'enrol',
  settled: 'settl',
  lane_committed: 'commit',
  integrated: 'integ',
  released: 'relsd',
  needs_human: 'human',
  skipped_blocked: 'skip',
  dropped: 'drop',
};

/** The selection mark and its space. */
const MARK = 2;

const width = (text: string) => [...text].length;

export function healthTag(row: LaneRow): HealthTag | null {
  if (row.reviewPending) return { text: 'review', short: 'review', color: 'magenta' };
  if (row.health?.waiting) return { text: 'waiting', short: 'wait', color: 'magenta' };
  if (row.health?.stalled) return { text: 'stalled', short: 'stall', color: 'red' };
  if (row.health?.drift.length) return { text: 'scope drift', short: 'drift', color: 'red' };
  return null;
}

/** The QA failures, with the word or as the cross alone. */
function qaText(row: LaneRow, compact: boolean): string {
  if (!row.qaFailures) return '';
  return compact ? ` ✗${row.qaFailures}` : ` qa✗${row.qaFailures}`;
}

/**
 * The dim end of the row, longest first: attempt, QA failures, the tokens its agent reported
 * (none for a command) and the time; then without the word "tok", the time, the attempt.
 */
function tails(row: LaneRow, qa: string, time: string): string[] {
  const head = `${row.attempt ? ` #${row.attempt}` : '   '}${qa}`;
  const at = time ? ` ${time}` : '';
  if (!row.usage) return [head + at, head, qa];
  const tokens = ` ${formatTokens(tokensOf(row.usage))}`;
  return [`${head}${tokens} tok${at}`, `${head}${tokens}${at}`, head + tokens, qa + tokens];
}

/** The least a row needs beside its id before the id column narrows: short state and tag, ✗n, tokens. */
function leastBesideId(row: LaneRow): number {
  const tag = healthTag(row);
  const tokens = row.usage ? 1 + width(formatTokens(tokensOf(row.usage))) : 0;
  return SHORT_STATE[row.state].length + 1 + (tag ? tag.short.length : 0) + width(qaText(row, true)) + tokens;
}

/** The columns of a list of `rows` in `listWidth` columns. */
export function rowColumns(rows: readonly LaneRow[], listWidth: number): RowColumns {
  const longestId = Math.min(14, Math.max(4, ...rows.map((r) => r.taskId.length)));
  // The id column narrows (to 4 at least) only as far as the row that needs most room needs.
  const need = Math.max(0, ...rows.map(leastBesideId));
  const idWidth = Math.max(4, Math.min(longestId, listWidth - MARK - 1 - need));
  // The minimum of 8 keeps the column still while lanes go pending → enrolled → released.
  const stateWidth = Math.max(...rows.map((r) => r.state.length), 8) + 1;
  // A batch with machines: each lane's machine, cut to what the row has room for beside the
  // attempt (3 columns at least, 8 at most); the selected lane's line below names it whole.
  const machineRoom = listWidth - (MARK + idWidth + 1 + stateWidth) - 5;
  const longestMachine = Math.max(0, ...rows.map((r) => r.machine?.length ?? 0));
  const machineWidth = longestMachine === 0 ? 0 : Math.min(8, longestMachine, Math.max(3, machineRoom));
  return { idWidth, stateWidth, machineWidth };
}

function machineText(row: LaneRow, machineWidth: number, afterTag: boolean): string {
  if (machineWidth === 0) return '';
  const name = row.machine
    ? `@${row.machine.slice(0, machineWidth).padEnd(machineWidth)}`
    : ' '.repeat(machineWidth + 1);
  return `${afterTag ? ' ' : ''}${name}`;
}

interface Try {
  state: string;
  tag: string;
  machine: boolean;
  compactQa: boolean;
}

/**
 * The row's parts in a list `listWidth` wide, `time` its elapsed time ('' when not started):
 * the first of the forms (in the order of the comment at the top) that fits.
 */
export function rowParts(row: LaneRow, columns: RowColumns, listWidth: number, time: string): RowParts {
  const tag = healthTag(row);
  const room = listWidth - MARK - columns.idWidth - 1;
  const whole = row.state.padEnd(columns.stateWidth);
  const short = `${SHORT_STATE[row.state]} `;
  const words = tag ? [tag.text, tag.short] : [''];
  const forms: Try[] = [
    ...words.map((t) => ({ state: whole, tag: t, machine: true, compactQa: false })),
    ...words.map((t) => ({ state: short, tag: t, machine: true, compactQa: false })),
    ...words.map((t) => ({ state: short, tag: t, machine: false, compactQa: false })),
    { state: short, tag: tag?.short ?? '', machine: false, compactQa: true },
    { state: short, tag: '', machine: false, compactQa: false },
    { state: short, tag: '', machine: false, compactQa: true },
  ];
  const parts = (form: Try, tail: string): RowParts => ({
    id: `${row.taskId.slice(0, columns.idWidth).padEnd(columns.idWidth)} `,
    state: form.state,
    tag: tag && form.tag ? { text: form.tag, color: tag.color } : null,
    machine: form.machine ? machineText(row, columns.machineWidth, form.tag !== '') : '',
    tail,
  });
  for (const form of forms) {
    const beside = width(form.state) + width(form.tag);
    const machine = form.machine ? width(machineText(row, columns.machineWidth, form.tag !== '')) : 0;
    const tail = tails(row, qaText(row, form.compactQa), time).find(
      (t) => beside + machine + width(t) <= room,
    );
    if (tail !== undefined) return parts(form, tail);
  }
  // (narrower than any list the TUI makes: the least form, cut at the list's edge)
  const least = forms.at(-1)!;
  const tail = tails(row, qaText(row, true), time).at(-1)!;
  return {
    ...parts(least, [...tail].slice(0, Math.max(0, room - width(short))).join('')),
    state: short.slice(0, Math.max(0, room)),
  };
}
