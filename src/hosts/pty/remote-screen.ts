import type { ScreenSnapshot, SentSnapshot, ToWorker } from './pty-messages.js';
import type { Screen, StyledRun } from './screen.js';

// A pty pane's screen as the main thread sees it: the latest snapshot the pty worker sent
// (src/hosts/pty/pty-worker.ts), read synchronously. Reading its styled lines (drawing the
// pane) asks for the next snapshot, sent when the screen has changed; its arrival calls the
// update listeners (the TUI redraws, at its own pace). A pane nobody draws costs nothing here.

function blank(cols: number, rows: number): ScreenSnapshot {
  return {
    cols,
    rows,
    cursor: { x: 0, y: 0 },
    alternate: false,
    bufferLength: rows,
    lines: Array.from({ length: rows }, () => ''),
    styled: Array.from({ length: rows }, () => []),
    tail: [],
  };
}

export class RemoteScreen implements Screen {
  private snapshot: ScreenSnapshot;
  private wanting = false;
  private ended = false;
  private flushes = 0;
  /** The flush asked for last and its promise: reused until more output arrives. */
  private current: { flush: number; done: Promise<void> } | null = null;
  private waiting = new Map<number, () => void>();
  private fresh = false;
  private readonly listeners = new Set<() => void>();
  private size: { cols: number; rows: number };

  constructor(
    private readonly id: number,
    cols: number,
    rows: number,
    private readonly post: (message: ToWorker) => void,
  ) {
    this.size = { cols, rows };
    this.snapshot = blank(cols, rows);
  }

  /** Output arrived for the pane (the worker parses it): a flush asked for after it is a new one. */
  noteOutput(): void {
    this.fresh = true;
  }

  /** A snapshot from the worker; `flush`, the flush it answers. */
  receive(sent: SentSnapshot, flush: number | null): void {
    // Rows the worker left out are the same as ours: kept, so a view can tell them unchanged.
    const styled = sent.styled.map((row, y) => row ?? this.snapshot.styled[y] ?? []);
    this.snapshot = { ...sent, styled, tail: sent.tail ?? this.snapshot.tail };
    this.wanting = false;
    if (flush !== null)
      for (const [n, resolve] of this.waiting)
        if (n <= flush) {
          this.waiting.delete(n);
          resolve();
        }
    for (const listener of this.listeners) listener();
  }

  /** The executor's end is parsed: nothing changes any more. */
  end(): void {
    this.ended = true;
    for (const resolve of this.waiting.values()) resolve();
    this.waiting.clear();
  }

  onUpdate(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  write(data: string | Uint8Array): Promise<void> {
    if (this.ended) return Promise.resolve();
    const text = typeof data === 'string' ? data : Buffer.from(data).toString('utf8');
    this.post({ t: 'feed', id: this.id, data: text });
    this.fresh = true;
    return this.flushed();
  }

  flushed(): Promise<void> {
    if (this.ended) return Promise.resolve();
    if (this.current && !this.fresh) return this.current.done;
    this.fresh = false;
    const flush = ++this.flushes;
    const done = new Promise<void>((resolve) => this.waiting.set(flush, resolve));
    this.current = { flush, done };
    this.post({ t: 'flush', id: this.id, flush });
    return done;
  }

  resize(cols: number, rows: number): void {
    this.size = { cols, rows };
    if (!this.ended) this.post({ t: 'resize', id: this.id, cols, rows });
  }

  get cols(): number {
    return this.size.cols;
  }

  get rows(): number {
    return this.size.rows;
  }

  get isAlternate(): boolean {
    return this.snapshot.alternate;
  }

  get bufferLength(): number {
    return this.snapshot.bufferLength;
  }

  cursor(): { x: number; y: number } {
    return this.snapshot.cursor;
  }

  lines(): string[] {
    return this.snapshot.lines;
  }

  tail(count: number): string[] {
    return (this.snapshot.tail ?? []).slice(-count);
  }

  /** The latest snapshot's rows; asks for the next one (the pane is being drawn). */
  styledLines(): StyledRun[][] {
    if (!this.wanting && !this.ended) {
      this.wanting = true;
      this.post({ t: 'want', id: this.id });
    }
    return this.snapshot.styled;
  }

  dispose(): void {
    this.listeners.clear();
  }
}
