import xterm from '@xterm/headless';

// A lane's screen model: a headless xterm fed with the pty's bytes. It gives the visible
// screen with colours (for the TUI) and a bounded scrollback, so memory stays flat however
// much an executor prints.

const { Terminal } = xterm;
type XTerm = InstanceType<typeof Terminal>;

export const DEFAULT_SCROLLBACK = 2000;

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

export class ScreenModel {
  readonly term: XTerm;
  private pending: Promise<void> = Promise.resolve();

  constructor(cols: number, rows: number, scrollback = DEFAULT_SCROLLBACK) {
    this.term = new Terminal({ cols, rows, scrollback, allowProposedApi: true });
  }

  /** Feeds bytes; resolves once xterm has parsed them. */
  write(data: string | Uint8Array): Promise<void> {
    this.pending = new Promise((resolve) => this.term.write(data, resolve));
    return this.pending;
  }

  /** Resolves when everything written so far is parsed. */
  flushed(): Promise<void> {
    return this.pending;
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
    const all: string[] = [];
    for (let y = 0; y < b.length; y++) all.push(b.getLine(y)?.translateToString(true) ?? '');
    while (all.length && all.at(-1) === '') all.pop();
    return all.slice(-count);
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
