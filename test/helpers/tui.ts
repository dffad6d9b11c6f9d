import { stripVTControlCharacters } from 'node:util';
import type { AppStore, TuiActions } from '../../components/App.js';
import type { ExitInfo, LaneSession } from '../../src/hosts/host.js';
import { ScreenModel } from '../../src/hosts/pty/screen.js';
import type { LaneRow, TuiSnapshot } from '../../src/tui/tui-store.js';
import { until } from './until.js';

// Small fakes for the TUI's inputs: a store with the public surface App reads, lane
// sessions that record what is written to them (their screen is a real ScreenModel), and
// actions that record the intents. Waiting is on content, never on time.

export const KEY = {
  DOWN: '\x1b[B',
  UP: '\x1b[A',
  ENTER: '\r',
  ESC: '\x1b',
  CTRL_C: '\x03',
  CTRL_G: '\x07',
} as const;

export function row(taskId: string, patch: Partial<LaneRow> = {}): LaneRow {
  return {
    taskId,
    state: 'pending',
    attempt: 0,
    qaFailures: 0,
    startedAt: null,
    endedAt: null,
    reason: null,
    health: null,
    reviewPending: false,
    running: false,
    usage: null,
    ...patch,
  };
}

export function snapshot(rows: LaneRow[], patch: Partial<TuiSnapshot> = {}): TuiSnapshot {
  return {
    version: 0,
    batchId: 'demo',
    branch: 'batch/demo',
    batchState: 'running',
    wave: 1,
    waves: 4,
    integrated: 0,
    total: rows.length,
    startedAt: Date.now(),
    endedAt: null,
    rows,
    usage: null,
    paused: false,
    pauseReason: null,
    notices: [],
    machinesAway: [],
    ...patch,
  };
}

/** The store surface App uses, with a snapshot the test replaces. */
export class FakeStore implements AppStore {
  readonly sessions = new Map<string, LaneSession>();
  readonly shells = new Map<string, LaneSession>();
  visible: string[] = [];
  private listeners = new Set<() => void>();

  constructor(private snap: TuiSnapshot) {}

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getSnapshot = (): TuiSnapshot => this.snap;

  setVisible(taskIds: readonly string[]): void {
    this.visible = [...taskIds];
  }

  update(patch: Partial<TuiSnapshot>): void {
    this.snap = { ...this.snap, ...patch, version: this.snap.version + 1 };
    for (const l of this.listeners) l();
  }
}

/** A lane session whose screen is a real ScreenModel; writes to it are recorded. */
export class FakeSession implements LaneSession {
  readonly host = 'pty';
  readonly pid = null;
  readonly paneId = null;
  readonly screen: ScreenModel;
  readonly writes: string[] = [];
  readonly exited: Promise<ExitInfo>;
  running = true;
  private exit: (info: ExitInfo) => void = () => {};

  constructor(
    readonly taskId: string,
    cols = 60,
    rows = 12,
  ) {
    this.screen = new ScreenModel(cols, rows);
    this.exited = new Promise((resolve) => (this.exit = resolve));
  }

  private listeners = new Set<(chunk: string) => void>();

  /** Feeds terminal bytes to the screen model and tells the listeners, as the pty host does. */
  async print(data: string): Promise<void> {
    await this.screen.write(data);
    for (const l of this.listeners) l(data);
  }

  /** Tells the output listeners only (no screen write): for tests on fake timers. */
  emit(chunk: string): void {
    for (const l of this.listeners) l(chunk);
  }

  end(code = 0): void {
    this.running = false;
    this.exit({ code, signal: null });
  }

  onOutput(listener: (chunk: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  write(data: string): void {
    this.writes.push(data);
  }
  resize(cols: number, rows: number): void {
    this.screen.resize(cols, rows);
  }
  kill(): void {
    this.end(129);
  }
  recentLines(count: number): string[] {
    return this.screen.tail(count);
  }
}

export type Call = [name: string, ...args: unknown[]];

/** Actions that record every intent; diff/qaLog answer with the given texts. */
export function recordingActions(
  options: {
    diff?: string;
    qaLog?: string;
    running?: number;
    focusOutside?: boolean;
    onShell?: (task: string) => void;
  } = {},
): TuiActions & { calls: Call[]; named: (name: string) => Call[] } {
  const calls: Call[] = [];
  const record =
    (name: string) =>
    (...args: unknown[]) =>
      void calls.push([name, ...args]);
  return {
    calls,
    named: (name) => calls.filter((c) => c[0] === name),
    confirm: record('confirm'),
    resume: record('resume'),
    retry: record('retry'),
    drop: record('drop'),
    cancel: record('cancel'),
    review: record('review'),
    togglePause: record('togglePause'),
    diff: async (task) => {
      calls.push(['diff', task]);
      return options.diff ?? '';
    },
    qaLog: async (task) => {
      calls.push(['qaLog', task]);
      return options.qaLog ?? '';
    },
    openShell: async (task) => {
      calls.push(['openShell', task]);
      options.onShell?.(task);
    },
    focusOutside: (task) => {
      calls.push(['focusOutside', task]);
      return options.focusOutside ?? false;
    },
    resize: () => {},
    runningInApp: () => options.running ?? 0,
    quit: record('quit'),
  };
}

export const plain = (frame: string | undefined): string => stripVTControlCharacters(frame ?? '');

const POLL_MS = 5;

/**
 * Waits until the frame (ANSI stripped) matches; returns it. Fails with the last frame.
 * `lastFrame` is ink-testing-library's; `styled` matches against the raw frame instead.
 */
export async function waitForFrame(
  lastFrame: () => string | undefined,
  match: RegExp | string | ((frame: string) => boolean),
  { timeoutMs = 5000, styled = false }: { timeoutMs?: number; styled?: boolean } = {},
): Promise<string> {
  const test =
    typeof match === 'function'
      ? match
      : typeof match === 'string'
        ? (f: string) => f.includes(match)
        : (f: string) => match.test(f);
  let frame = '';
  // The frame is returned wrapped: an empty frame can match, and '' is falsy.
  const matched = await until(
    () => {
      frame = styled ? (lastFrame() ?? '') : plain(lastFrame());
      return test(frame) ? { frame } : null;
    },
    `a frame matching ${String(match)}`,
    { timeoutMs, everyMs: POLL_MS, detail: () => `last frame:\n${frame}` },
  );
  return matched.frame;
}

/**
 * Resolves after a few turns of the event loop. Ink writes a frame at React's commit, but
 * the passive effects of that commit (which subscribe the input handlers) run in a later
 * task: a key written in between is lost. React's scheduler runs them from setImmediate.
 */
export async function settled(turns = 3): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Waits until `condition` holds (a recorded call, a write to a session). */
export async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  await until(condition, `the condition ${String(condition)}`, { timeoutMs, everyMs: POLL_MS });
}

/**
 * ink-testing-library's stdout is fixed at 100 columns and has no rows: this gives it a
 * size and tells the app (as a terminal resize does). Ink reads the width at each render.
 */
export function resize(stdout: NodeJS.EventEmitter, columns: number, rows: number): void {
  Object.defineProperty(stdout, 'columns', { configurable: true, get: () => columns });
  Object.defineProperty(stdout, 'rows', { configurable: true, get: () => rows });
  stdout.emit('resize');
}
