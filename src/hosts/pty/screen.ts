import xterm from '@xterm/headless';

// A lane's screen model: a headless xterm fed with the pty's bytes. It gives the visible
// screen with colours (for the TUI) and a bounded scrollback, so memory stays flat however
// much an executor prints.
//
// The pty is read as fast as the executor writes (a pty left unread when its executor exits
// loses output in the kernel; docs/DECISIONS.md "Pane output"), and xterm parses slower than
// that. So chunks wait here: at most SLICE_CHARS are handed to xterm at once, the next slice
// after the ptys have been read (parse slices stay short: the ptys are read and keys are not
// starved, and a pty is read as fast as tmux reads it), and when more than MAX_QUEUED_CHARS wait, the
// oldest are dropped: only the last screenful and the scrollback can still be seen, and the
// transcript (not this) keeps every byte.

const { Terminal } = xterm;
type XTerm = InstanceType<typeof Terminal>;

export const DEFAULT_SCROLLBACK = 2000;

/** Characters handed to xterm at once: about 1.5 ms of parsing on this machine. */
const SLICE_CHARS = 64 * 1024;
/** Between slices, this many times the last slice's time for other work (parsing takes at most a third). */
const PARSE_GAP_FACTOR = 2;
/** Characters queued for xterm at most (a few screenfuls and a full scrollback, many times over). */
const MAX_QUEUED_CHARS = 1024 * 1024;
/** What dropping leaves queued: the newest characters, this many at least. */
const KEEP_AFTER_DROP_CHARS = MAX_QUEUED_CHARS / 2;
/** Switches to and from the alternate screen: the last one dropped is replayed. */
const ALTERNATE_SCREEN = new RegExp(`${String.fromCharCode(27)}\\[\\?(?:1049|1047|47)[hl]`, 'g');

interface Queued {
  data: string | Uint8Array;
  done: () => void;
}

export interface Cell {
  text: string;
  fg: number | null;
  bg: number | null;
  bold: boolean;
}

/** A run of cells with the same style on one screen line. */
export interface StyledRun {
  text: string;
  fg: number | null;
  bg: number | null;
  bold: boolean;
  fgRgb: boolean;
  bgRgb: boolean;
}

/**
 * What the TUI, the hosts and the tests read of a pane's screen. A ScreenModel is one (it
 * parses in this thread); the pty host's panes are parsed in a worker thread and read
 * through its latest snapshot (src/hosts/pty/remote-screen.ts).
 */
export interface Screen {
  readonly cols: number;
  readonly rows: number;
  readonly isAlternate: boolean;
  readonly bufferLength: number;
  /** Feeds bytes; resolves once they are parsed. */
  write(data: string | Uint8Array): Promise<void>;
  /** Resolves when everything written so far is parsed (the same promise until more is written). */
  flushed(): Promise<void>;
  resize(cols: number, rows: number): void;
  cursor(): { x: number; y: number };
  lines(): string[];
  tail(count: number): string[];
  styledLines(): StyledRun[][];
  /** Where the screen is parsed elsewhere: called when a newer screen has arrived (redraw then). */
  onUpdate?(listener: () => void): () => void;
  dispose(): void;
}

export class ScreenModel implements Screen {
  readonly term: XTerm;
  private queue: Queued[] = [];
  private queuedChars = 0;
  private inFlight = 0;
  private inFlightChars = 0;
  private sliceStarted = 0;
  /** Between two slices: what arrives meanwhile waits for the next one. */
  private resting = false;
  /** Whether output arrived since the slice began: a flood (rest after it) or a tail (parse on). */
  private arrived = false;
  private idle: Promise<void> = Promise.resolve();
  private becomeIdle: (() => void) | null = null;

  constructor(cols: number, rows: number, scrollback = DEFAULT_SCROLLBACK) {
    // logLevel off: bytes that are no terminal sequence (a binary file in a lane) are parsed
    // quietly instead of one "Parsing error" line each on the coordinator's stderr.
    this.term = new Terminal({ cols, rows, scrollback, allowProposedApi: true, logLevel: 'off' });
  }

  /** Feeds bytes; resolves once xterm has parsed them (or they were dropped, see above). */
  write(data: string | Uint8Array): Promise<void> {
    if (!this.becomeIdle) this.idle = new Promise((resolve) => (this.becomeIdle = resolve));
    const written = new Promise<void>((done) => this.queue.push({ data, done }));
    this.queuedChars += data.length;
    if (this.queuedChars > MAX_QUEUED_CHARS) this.dropOldest();
    this.arrived = true;
    if (!this.resting) this.pump();
    return written;
  }

  /** Resolves when everything written so far is parsed (the same promise until more is written). */
  flushed(): Promise<void> {
    return this.idle;
  }

  /**
   * Hands xterm the next slice. Only here, never from xterm's callbacks: xterm parses what
   * it holds in one go (up to 12 ms), so a slice refilled from inside that loop kept the
   * pty from being read, and the executor waited on the parsing.
   */
  private pump(): void {
    if (this.inFlight === 0) {
      this.sliceStarted = performance.now();
      this.arrived = false;
    }
    while (this.inFlightChars < SLICE_CHARS && this.queue.length > 0) {
      const { data, done } = this.queue.shift()!;
      this.queuedChars -= data.length;
      this.inFlightChars += data.length;
      this.inFlight++;
      this.term.write(data, () => {
        this.inFlight--;
        this.inFlightChars -= data.length;
        done();
        if (this.inFlight > 0) return;
        if (this.queue.length > 0) return this.nextSlice();
        const resolve = this.becomeIdle;
        this.becomeIdle = null;
        resolve?.();
      });
    }
  }

  /**
   * The next slice after the ptys have been read (setImmediate runs after I/O). While output
   * floods in, also after PARSE_GAP_FACTOR times what the last slice took: the queue grows
   * and its oldest part is dropped unparsed, so a flood costs a bounded share of the thread.
   * When nothing arrived during the slice, the rest is a tail: parsed on at once.
   */
  private nextSlice(): void {
    const gap = this.arrived ? (performance.now() - this.sliceStarted) * PARSE_GAP_FACTOR : 0;
    const next = () => {
      this.resting = false;
      this.pump();
    };
    this.resting = true;
    if (gap < 1) setImmediate(next);
    else setTimeout(next, gap);
  }

  /** Drops the oldest queued chunks; resets the colours and replays the screen they left. */
  private dropOldest(): void {
    let switchTo = '';
    while (this.queuedChars > KEEP_AFTER_DROP_CHARS && this.queue.length > 1) {
      const { data, done } = this.queue.shift()!;
      this.queuedChars -= data.length;
      const text = typeof data === 'string' ? data : Buffer.from(data).toString('latin1');
      switchTo = text.match(ALTERNATE_SCREEN)?.at(-1) ?? switchTo;
      done();
    }
    const resume = `\x1b[0m${switchTo}\r\n`;
    this.queue.unshift({ data: resume, done: () => {} });
    this.queuedChars += resume.length;
  }

  resize(cols: number, rows: number): void {
    this.term.resize(cols, rows);
  }

  get cols(): number {
    return this.term.cols;
  }

  get rows(): number {
    return this.term.rows;
  }

  get isAlternate(): boolean {
    return this.term.buffer.active.type === 'alternate';
  }

  cursor(): { x: number; y: number } {
    const b = this.term.buffer.active;
    return { x: b.cursorX, y: b.cursorY };
  }

  /** The visible screen as plain text lines (trailing spaces trimmed). */
  lines(): string[] {
    const b = this.term.buffer.active;
    const out: string[] = [];
    for (let y = 0; y < this.term.rows; y++)
      out.push(b.getLine(b.viewportY + y)?.translateToString(true) ?? '');
    return out;
  }

  /** The last `count` lines of scrollback + screen, without trailing blank lines. */
  tail(count: number): string[] {
    const b = this.term.buffer.active;
    const out: string[] = [];
    // From the end: the trailing blank lines skipped, then `count` lines at most.
    for (let y = b.length - 1; y >= 0 && out.length < count; y--) {
      const text = b.getLine(y)?.translateToString(true) ?? '';
      if (out.length === 0 && text === '') continue;
      out.push(text);
    }
    return out.reverse();
  }

  /** Number of lines held (scrollback + screen): bounded by scrollback + rows. */
  get bufferLength(): number {
    return this.term.buffer.active.length;
  }

  /** The visible screen as styled runs per line, for rendering with colours kept. */
  styledLines(): StyledRun[][] {
    const b = this.term.buffer.active;
    const cell = b.getNullCell();
    const rows: StyledRun[][] = [];
    for (let y = 0; y < this.term.rows; y++) {
      const line = b.getLine(b.viewportY + y);
      const runs: StyledRun[] = [];
      if (line) {
        for (let x = 0; x < this.term.cols; x++) {
          line.getCell(x, cell);
          const chars = cell.getChars() || (cell.getWidth() === 0 ? '' : ' ');
          if (chars === '' && cell.getWidth() === 0) continue;
          const style = {
            fg: cell.isFgDefault() ? null : cell.getFgColor(),
            bg: cell.isBgDefault() ? null : cell.getBgColor(),
            bold: cell.isBold() !== 0,
            fgRgb: cell.isFgRGB(),
            bgRgb: cell.isBgRGB(),
          };
          const last = runs.at(-1);
          if (
            last &&
            last.fg === style.fg &&
            last.bg === style.bg &&
            last.bold === style.bold &&
            last.fgRgb === style.fgRgb &&
            last.bgRgb === style.bgRgb
          )
            last.text += chars;
          else runs.push({ text: chars, ...style });
        }
        const last = runs.at(-1);
        if (last && last.bg === null) last.text = last.text.replace(/ +$/, '');
      }
      rows.push(runs.filter((r) => r.text !== ''));
    }
    return rows;
  }

  dispose(): void {
    this.term.dispose();
  }
}
