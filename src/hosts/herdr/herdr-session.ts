import { readExitStatus } from '../exit-status.js';
import type { HerdrCli, HerdrError } from './herdr-cli.js';
import { isHerdrError } from './herdr-cli.js';
import { formatLaneRef } from './herdr-tabs.js';
import type { LaneTab } from './herdr-tabs.js';
import { markerRegex, readWrapperPid } from './herdr-wrapper.js';
import type { WrapperFiles } from './herdr-wrapper.js';
import { killGroup } from '../../process/process-group.js';
import type { ExitInfo, LaneSession, LaunchSpec } from '../host.js';
import { isSameProcessAlive, processStartTime } from '../../process/process-info.js';
import { Transcript } from '../transcript.js';
import { OutputListeners } from '../output-listeners.js';

// One executor in a Herdr tab. Its end is known from the status file its wrapper writes
// (polled: it works even while Herdr does not answer), woken early by `pane wait-output`
// on the wrapper's marker; a wrapper that died without writing one was killed hard (the
// attempt is lost). The recent output comes from `pane read`, cached on a timer because
// LaneSession.recentLines is synchronous; what changes is appended to the transcript log.

/** How often the status file and the wrapper's pid are checked. */
export const STATUS_POLL_MS = 250;
/** How often the lane's recent output is read from Herdr while it changes; quiet lanes are read less often. */
export const RECENT_REFRESH_MS = 1000;
export const QUIET_REFRESH_MAX_MS = 5000;
export const RECENT_READ_LINES = 200;
/** One `pane wait-output` call's timeout; the wait is renewed until the executor ends. */
export const MARKER_WAIT_MS = 60_000;
/** After the end, how long the last `pane read` may take before the exit is reported anyway. */
const FINAL_READ_MS = 2000;
const RETRY_WAIT_MS = 2000;

/** What a session needs from its host: the CLI, and where to report Herdr's health. */
export interface HerdrLink {
  cli: HerdrCli;
  trouble(error: HerdrError): void;
  fine(): void;
}

export class HerdrSession implements LaneSession {
  readonly host = 'herdr';
  readonly taskId: string;
  /** `<tab id>|<pane id>`: what the kernel records, and reattach reads back. */
  readonly paneId: string;
  readonly pid: number | null;
  readonly exited: Promise<ExitInfo>;
  private readonly pidStart: string | null;
  private resolveExit: (exit: ExitInfo) => void = () => {};
  private ended = false;
  /** Watching stopped (ended, or detached): a cancelled wait is not an error. */
  private stopped = false;
  private lines: string[] = [];
  private readAt = 0;
  private refreshing: Promise<void> | null = null;
  private readonly listeners = new OutputListeners();
  private statusTimer: NodeJS.Timeout | null = null;
  private refreshTimer: NodeJS.Timeout | null = null;
  private refreshEvery = RECENT_REFRESH_MS;
  private waiter: ReturnType<HerdrCli['start']> | null = null;
  private readonly transcript: Transcript;

  constructor(
    private readonly link: HerdrLink,
    readonly tab: LaneTab,
    private readonly spec: LaunchSpec,
    private readonly files: WrapperFiles,
  ) {
    this.taskId = spec.taskId;
    this.paneId = formatLaneRef(tab);
    this.pid = readWrapperPid(files);
    this.pidStart = this.pid ? processStartTime(this.pid) : null;
    this.exited = new Promise((resolve) => (this.resolveExit = resolve));
    this.transcript = new Transcript(spec.logPath);
    // The status poll keeps lanes alive while it waits; the output refresh does not need to.
    this.statusTimer = setInterval(() => this.checkExit(), STATUS_POLL_MS);
    void this.refresh();
    this.watchMarker();
  }

  get running(): boolean {
    return !this.ended;
  }

  onOutput(listener: (chunk: string) => void): () => void {
    return this.listeners.add(listener);
  }

  /** Keystrokes typed into the tab (the TUI normally focuses the tab instead). */
  write(data: string): void {
    if (this.ended || data === '') return;
    this.link.cli.run(['pane', 'send-text', this.tab.paneId, data]).catch(() => {});
  }

  resize(): void {
    // Herdr sizes its own panes.
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): void {
    if (this.ended) return;
    if (this.pid) killGroup(this.pid, signal);
    else this.link.cli.run(['pane', 'send-keys', this.tab.paneId, 'ctrl+c']).catch(() => {});
  }

  /** Shows the lane's tab in Herdr (the TUI's enter key). */
  async focus(): Promise<void> {
    await this.link.cli.json(['tab', 'focus', this.tab.tabId]);
  }

  recentLines(count: number): string[] {
    if (!this.ended && Date.now() - this.readAt > RECENT_REFRESH_MS) void this.refresh();
    return this.lines.slice(-count);
  }

  /** Stops watching without touching the tab: the executor keeps running in Herdr. */
  detach(): void {
    this.stopWatching();
    this.transcript.close();
  }

  private stopWatching(): void {
    this.stopped = true;
    if (this.statusTimer) clearInterval(this.statusTimer);
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    this.waiter?.kill();
    this.waiter = null;
  }

  private checkExit(): void {
    if (this.ended) return;
    let exit = readExitStatus(this.spec.statusPath);
    // The wrapper writes the status before it ends: gone without one means killed hard.
    if (!exit && this.pid && !isSameProcessAlive(this.pid, this.pidStart))
      exit = readExitStatus(this.spec.statusPath) ?? { code: null, signal: 'lost' };
    if (exit) void this.finish(exit);
  }

  private async finish(exit: ExitInfo): Promise<void> {
    this.ended = true;
    this.stopWatching();
    // The last screen, for QA failure context and the log; not worth waiting for long.
    await Promise.race([this.refresh(true), new Promise((resolve) => setTimeout(resolve, FINAL_READ_MS))]);
    this.transcript.close();
    this.resolveExit(exit);
  }

  private refresh(final = false): Promise<void> {
    if (this.refreshing) return this.refreshing;
    if (this.ended && !final) return Promise.resolve();
    const args = ['pane', 'read', this.tab.paneId, '--source', 'recent-unwrapped', '--lines'];
    this.refreshing = this.link.cli
      .run([...args, String(RECENT_READ_LINES)])
      .then((text) => {
        this.link.fine();
        // Changing output is read every second; a quiet lane less and less often.
        this.refreshEvery = this.take(text)
          ? RECENT_REFRESH_MS
          : Math.min(this.refreshEvery * 2, QUIET_REFRESH_MAX_MS);
      })
      .catch((error: unknown) => {
        if (isHerdrError(error) && error.transient) this.link.trouble(error);
        // a pane that is gone: the status file and the wrapper's pid tell how it ended
      })
      .finally(() => {
        this.readAt = Date.now();
        this.refreshing = null;
        if (this.refreshTimer) clearTimeout(this.refreshTimer);
        if (!this.stopped)
          this.refreshTimer = setTimeout(() => void this.refresh(), this.refreshEvery).unref();
      });
    return this.refreshing;
  }

  /** Takes a read; true when it showed something new. */
  private take(text: string): boolean {
    const next = text.replace(/\r/g, '').split('\n');
    while (next.length && next.at(-1)!.trim() === '') next.pop();
    const added = addedLines(this.lines, next);
    this.lines = next;
    if (added.length === 0) return false;
    const chunk = `${added.join('\n')}\n`;
    this.transcript.add(chunk);
    this.listeners.emit(chunk);
    return true;
  }

  /** The second signal: Herdr tells when the wrapper's marker appears in the pane. */
  private watchMarker(): void {
    if (this.stopped) return;
    const args = ['pane', 'wait-output', this.tab.paneId, '--regex', markerRegex(this.files)];
    const all = [
      ...args,
      '--source',
      'recent-unwrapped',
      '--lines',
      '200',
      '--timeout',
      String(MARKER_WAIT_MS),
    ];
    const waiter = this.link.cli.start(all);
    this.waiter = waiter;
    void waiter.then((result) => {
      if (this.waiter === waiter) this.waiter = null;
      if (this.stopped) return;
      try {
        this.link.cli.settle(all, result);
        this.checkExit(); // matched: the status file was written just before the marker
      } catch (error) {
        if (!isHerdrError(error)) return;
        if (error.herdrCode === 'timeout') this.watchMarker();
        else if (error.transient) {
          this.link.trouble(error);
          setTimeout(() => this.watchMarker(), RETRY_WAIT_MS).unref();
        }
        // otherwise (pane gone, an old Herdr): the status poll alone tells the end
      }
    });
  }
}

/** The lines of `next` that were not in `prev` (whose last line may still have been growing). */
export function addedLines(prev: readonly string[], next: readonly string[]): string[] {
  if (prev.length === next.length && prev.every((line, i) => line === next[i])) return [];
  const base = prev.slice(0, -1);
  for (let k = Math.min(base.length, next.length); k > 0; k--) {
    let same = true;
    for (let i = 0; i < k && same; i++) same = base[base.length - k + i] === next[i];
    if (same) return next.slice(k);
  }
  return [...next];
}
