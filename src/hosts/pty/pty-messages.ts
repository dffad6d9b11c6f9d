import type { ScreenModel, StyledRun } from './screen.js';

// What lanes' main thread and the pty worker (src/hosts/pty/pty-worker.ts) say to each
// other. The worker holds the ptys and their screen models; the main thread gets every
// byte (for the transcript and the output listeners) and snapshots of the screens.

/** The last lines of scrollback + screen a snapshot carries (recentLines reads them). */
export const TAIL_LINES = 200;

/** A pane's screen as it was parsed at one moment: what the main thread reads synchronously. */
export interface ScreenSnapshot {
  cols: number;
  rows: number;
  cursor: { x: number; y: number };
  alternate: boolean;
  bufferLength: number;
  lines: string[];
  styled: StyledRun[][];
  /** Left out of the snapshots taken to draw a pane (the main thread keeps the last one). */
  tail?: string[];
}

/** A snapshot as sent: a row the same as in the last one sent is null (the receiver keeps it). */
export interface SentSnapshot extends Omit<ScreenSnapshot, 'styled'> {
  styled: (StyledRun[] | null)[];
}

function sameRow(a: StyledRun[], b: StyledRun[] | undefined): boolean {
  if (!b || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x.text !== y.text || x.fg !== y.fg || x.bg !== y.bg || x.bold !== y.bold) return false;
    if (x.fgRgb !== y.fgRgb || x.bgRgb !== y.bgRgb) return false;
  }
  return true;
}

/** What of `snapshot` differs from `sent` (the rows the receiver holds): the rest is null. */
export function changedRows(snapshot: ScreenSnapshot, sent: StyledRun[][]): SentSnapshot {
  const same = snapshot.styled.length === sent.length;
  return {
    ...snapshot,
    styled: snapshot.styled.map((row, y) => (same && sameRow(row, sent[y]) ? null : row)),
  };
}

/** `withTail`: the recent lines too (a flush, a quiet screen), not only what is drawn. */
export function snapshotOf(screen: ScreenModel, withTail: boolean): ScreenSnapshot {
  const snapshot: ScreenSnapshot = {
    cols: screen.cols,
    rows: screen.rows,
    cursor: screen.cursor(),
    alternate: screen.isAlternate,
    bufferLength: screen.bufferLength,
    lines: screen.lines(),
    styled: screen.styledLines(),
  };
  if (withTail) snapshot.tail = screen.tail(TAIL_LINES);
  return snapshot;
}

export interface OpenPane {
  t: 'open';
  id: number;
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  cols: number;
  rows: number;
  scrollback: number | undefined;
}

export type ToWorker =
  | OpenPane
  /** Keystrokes for the pty. */
  | { t: 'write'; id: number; data: string }
  /** Bytes for the screen model only. */
  | { t: 'feed'; id: number; data: string }
  | { t: 'resize'; id: number; cols: number; rows: number }
  /** The main thread has taken this many characters of the pane's output. */
  | { t: 'took'; id: number; chars: number }
  /** The pane is drawn: a snapshot as soon as its screen differs from the last one sent. */
  | { t: 'want'; id: number }
  /** A snapshot once everything the worker holds for the pane so far is parsed. */
  | { t: 'flush'; id: number; flush: number };

export type FromWorker =
  | { t: 'spawned'; id: number; pid: number }
  | { t: 'failed'; id: number; message: string }
  | { t: 'data'; id: number; data: string }
  /** `flush`: the flush request it answers, if any. */
  | { t: 'snapshot'; id: number; flush: number | null; snapshot: SentSnapshot }
  /** The executor exited and its pty was read to its end (no data follows). */
  | { t: 'ended'; id: number; exitCode: number; signal: number }
  /** ...and the screen has parsed that end (a last snapshot came before this). */
  | { t: 'exit'; id: number };
