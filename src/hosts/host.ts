import type { Screen } from './pty/screen.js';

// Where executors run (DESIGN §7): in-app pty panes, Herdr tabs, or plain child processes.
// Every host gives the coordinator the same session handle, and says what it can do in its
// capabilities: code outside src/hosts reads those, never a host's name. A host is one
// file (or folder) of src/hosts plus one line in the registry (src/hosts/hosts.ts).

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
  readonly screen?: Screen;
  /** Shows the executor where it really runs (a Herdr tab), for hosts that have such a place. */
  focus?(): Promise<void>;
}

/**
 * What a host can do, declared by it. Written so that a host of executors on other machines
 * (tmux sessions there, reached over ssh) declares itself with the same four facts.
 */
export interface HostCapabilities {
  /** Its sessions are panes lanes draws in its own TUI (a local pty): they end with lanes. */
  readonly inAppPane: boolean;
  /**
   * Its executors keep running when lanes exits or is killed (Herdr tabs, tmux sessions):
   * such a host has `reattach`, and `resume` finds each attempt again by its recorded pane.
   */
  readonly outlivesLanes: boolean;
  /** The user can go to an executor where it runs, outside lanes' panes (a Herdr tab; tmux attach). */
  readonly attachable: boolean;
  /**
   * How agents run in it: `interactive` with a terminal (their own TUI; lanes closes them
   * with their quit keys), or `headless` without one (JSON lines; they end on their own).
   */
  readonly agents: 'interactive' | 'headless';
}

export interface Host {
  /** Its registry name: what `--host` takes and what the records keep beside a pane id. */
  readonly name: string;
  readonly capabilities: HostCapabilities;
  open(spec: LaunchSpec): Promise<LaneSession>;
  /** Sessions that outlive lanes (Herdr tabs) are found again by task; others return null. */
  reattach?(spec: LaunchSpec, paneId: string): Promise<LaneSession | null>;
  /** Other host names whose recorded attempts `reattach` finds too (a routed host: its machines'). */
  readonly reattaches?: readonly string[];
  /** After a lane's release: close what the host keeps open for it (a Herdr tab). */
  closeLane?(taskId: string, lanePath: string): Promise<void>;
  dispose(): Promise<void>;
}

/** What a host can find out before it is made: is it the one to use here? */
export interface HostSurroundings {
  /** lanes draws its TUI (a terminal on both ends, no --headless). */
  readonly tuiDrawn: boolean;
  readonly env: NodeJS.ProcessEnv;
}

/** `use`: choose this host; else not, and `why` (when given) is told when another is chosen. */
export type HostDetection = { use: true } | { use: false; why?: string };

/** What making a host may need: where it tells the user things, and the terminal's size. */
export interface HostMaking {
  /** Where a host says what it has to say mid-batch ("Herdr is not answering"). */
  readonly notify: (text: string) => void;
  readonly cols: number;
  readonly rows: number;
}

/** A host as the registry knows it: its name, whether to choose it, and how to make it. */
export interface HostEntry {
  readonly name: string;
  /** One line for `lanes --help` and the docs. */
  readonly summary: string;
  /** Asked in registry order when `--host` is not given: the first that says `use` is chosen. */
  detect(where: HostSurroundings): HostDetection;
  /** Makes the host; a typed error (exit 2 for a setup the user fixes) when it cannot be used. */
  create(making: HostMaking): Promise<Host>;
}
