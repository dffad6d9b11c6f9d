import type { ScreenModel } from './pty/screen.js';

// Where executors run (DESIGN §7): in-app pty panes, Herdr tabs, or plain child processes.
// Every host gives the coordinator the same session handle.

export interface ExitInfo {
  code: number | null;
  signal: string | null;
}

export interface LaunchSpec {
  taskId: string;
  runId: string;
  attempt: number;
  cwd: string;
  argv: readonly string[];
  env: Record<string, string>;
  /** Transcript of everything the executor prints. */
  logPath: string;
  /** Written by the exit wrapper when the executor ends, even if lanes is gone by then. */
  statusPath: string;
  /** Headless agents print JSON lines: each is rendered into readable transcript lines. */
  renderLine?: (line: string) => string[];
}

export interface LaneSession {
  readonly taskId: string;
  readonly host: string;
  /** Process id of the wrapper (the executor's parent), when the host knows it. */
  readonly pid: number | null;
  /** A pane/tab id for hosts that have one. */
  readonly paneId: string | null;
  readonly exited: Promise<ExitInfo>;
  readonly running: boolean;
  onOutput(listener: (chunk: string) => void): () => void;
  write(data: string): void;
  resize(cols: number, rows: number): void;
  kill(signal?: NodeJS.Signals): void;
  /** The recent output, for QA context and the TUI (plain text lines). */
  recentLines(count: number): string[];
  /** The terminal's screen (rows with their colours), for hosts that keep one (pty). */
  readonly screen?: ScreenModel;
  /** Shows the executor where it really runs (a Herdr tab), for hosts that have such a place. */
  focus?(): Promise<void>;
}

export interface Host {
  readonly name: 'pty' | 'headless' | 'herdr';
  open(spec: LaunchSpec): Promise<LaneSession>;
  /** Sessions that outlive lanes (Herdr tabs) are found again by task; others return null. */
  reattach?(spec: LaunchSpec, paneId: string): Promise<LaneSession | null>;
  /** After a lane's release: close what the host keeps open for it (a Herdr tab). */
  closeLane?(taskId: string, lanePath: string): Promise<void>;
  dispose(): Promise<void>;
}
