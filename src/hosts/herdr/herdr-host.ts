import { existsSync } from 'node:fs';
import { HerdrError, isHerdrError } from './herdr-cli.js';
import { detectHerdr, herdrUnusableReason } from './herdr-detect.js';
import type { HerdrPlace } from './herdr-detect.js';
import { HerdrSession } from './herdr-session.js';
import type { HerdrLink } from './herdr-session.js';
import {
  createLaneTab,
  delay,
  findLaneTab,
  isShellIdle,
  paneInfo,
  parseLaneRef,
  waitForIdleShell,
} from './herdr-tabs.js';
import type { LaneTab } from './herdr-tabs.js';
import { liveWrapperPid, readWrapperPid, wrapperFiles, writeWrapper } from './herdr-wrapper.js';
import type { WrapperFiles } from './herdr-wrapper.js';
import type { Host, HostCapabilities, HostEntry, LaunchSpec } from '../host.js';

// Executors in Herdr tabs (DESIGN §7, docs/HERDR.md "One lane, one tab"): one
// tab per lane in the caller's workspace, labelled with the child id, rooted at the lane,
// never focused implicitly. Each attempt runs a wrapper script typed into the tab's idle
// shell; a lane's later attempts reuse its tab. Tabs outlive lanes: `resume` re-attaches
// through the recorded ids (or the label), and a lane's tab is closed after its release.
// When Herdr stops answering, lanes waits and retries (and says so); it parks nothing.

/** How long lanes waits between tries while Herdr does not answer. */
export const RETRY_MS = 2000;
/** How long a typed wrapper has to show its pid before lanes types it again. */
export const START_WAIT_MS = 5000;
const START_POLL_MS = 50;
const START_TRIES = 3;
/** Closing a released lane's tab is worth waiting for this long, not more. */
export const CLOSE_PATIENCE_MS = 30_000;

/** Chosen inside a Herdr that answers; HERDR_ENV=1 alone is only a hint (it leaks into nested shells). */
export const herdrHost: HostEntry = {
  name: 'herdr',
  summary: 'a Herdr tab per lane, in the workspace lanes runs in (the tabs outlive lanes)',
  detect: ({ env }) => {
    if (env.HERDR_ENV !== '1') return { use: false };
    const why = herdrUnusableReason(env);
    return why === null
      ? { use: true }
      : { use: false, why: `HERDR_ENV=1 but Herdr cannot be driven (${why})` };
  },
  create: ({ notify }) => HerdrHost.connect(notify),
};

export class HerdrHost implements Host {
  readonly name = 'herdr';
  readonly capabilities: HostCapabilities = {
    inAppPane: false,
    outlivesLanes: true,
    attachable: true,
    agents: 'interactive',
  };
  /** The tab of each lane this process knows; others are found by label. */
  private readonly lanes = new Map<string, LaneTab>();
  private readonly sessions = new Set<HerdrSession>();
  private readonly link: HerdrLink;
  private down = false;
  private disposed = false;

  constructor(
    private readonly place: HerdrPlace,
    /** Where "Herdr is not answering" and the like are told (the coordinator's notices). */
    private readonly notify: (text: string) => void = () => {},
  ) {
    this.link = { cli: place.cli, trouble: (e) => this.trouble(e), fine: () => this.fine() };
  }

  /** Detects Herdr (a HerdrError says why not) and returns a host for its caller's workspace. */
  static async connect(notify?: (text: string) => void): Promise<HerdrHost> {
    return new HerdrHost(await detectHerdr(), notify);
  }

  get workspaceId(): string {
    return this.place.workspaceId;
  }

  async open(spec: LaunchSpec): Promise<HerdrSession> {
    if (!existsSync(spec.cwd)) throw new Error(`lane ${spec.cwd} does not exist`);
    const { files, command } = writeWrapper(spec);
    const tab = await this.patiently(() => this.readyTab(spec));
    await this.patiently(() => this.startWrapper(spec, tab, files, command));
    return this.track(new HerdrSession(this.link, tab, spec, files));
  }

  /** An attempt started before a restart: its tab, if the wrapper still runs there; else null (lost). */
  async reattach(spec: LaunchSpec, ref: string): Promise<HerdrSession | null> {
    const files = wrapperFiles(spec.statusPath);
    if (liveWrapperPid(files) === null) return null;
    const recorded = parseLaneRef(ref);
    const info = await this.patiently(() => paneInfo(this.place.cli, recorded.paneId));
    const tab = info
      ? { tabId: recorded.tabId ?? info.tab_id, paneId: recorded.paneId }
      : await this.patiently(() => findLaneTab(this.place.cli, this.workspaceId, spec.taskId, spec.cwd));
    return tab ? this.track(new HerdrSession(this.link, tab, spec, files)) : null;
  }

  /** Shows a lane's tab in Herdr (the TUI's enter key). */
  async focus(taskId: string): Promise<void> {
    const tab = this.lanes.get(taskId);
    if (tab) await this.place.cli.json(['tab', 'focus', tab.tabId]);
  }

  /** After a lane's release: its tab goes too. Failing that, the user is told; nothing else waits on it. */
  async closeLane(taskId: string, lanePath: string): Promise<void> {
    const deadline = Date.now() + CLOSE_PATIENCE_MS;
    const cli = this.place.cli;
    try {
      const tab =
        this.lanes.get(taskId) ??
        (await this.patiently(() => findLaneTab(cli, this.workspaceId, taskId, lanePath), deadline));
      this.lanes.delete(taskId);
      if (tab) await this.patiently(() => cli.json(['tab', 'close', tab.tabId]), deadline);
    } catch (error) {
      if (isHerdrError(error) && error.gone) return;
      this.notify(`${taskId}: its Herdr tab was left open (${(error as Error).message})`);
    }
  }

  /** Stops watching; tabs and their executors keep running in Herdr. */
  async dispose(): Promise<void> {
    this.disposed = true;
    for (const session of this.sessions) session.detach();
    this.sessions.clear();
  }

  private track(session: HerdrSession): HerdrSession {
    this.sessions.add(session);
    this.lanes.set(session.taskId, session.tab);
    void session.exited.then(() => this.sessions.delete(session));
    return session;
  }

  /** The lane's tab with an idle shell: the one it had (a later attempt), else a new one. */
  private async readyTab(spec: LaunchSpec): Promise<LaneTab> {
    const cli = this.place.cli;
    const known =
      this.lanes.get(spec.taskId) ?? (await findLaneTab(cli, this.workspaceId, spec.taskId, spec.cwd));
    let tab = known && (await this.idleOrGone(known)) ? known : null;
    tab ??= await createLaneTab(cli, this.workspaceId, spec.cwd, spec.taskId, { LANES_TASK: spec.taskId });
    this.lanes.set(spec.taskId, tab);
    if (!(await waitForIdleShell(cli, tab.paneId)))
      throw new HerdrError(
        'herdr_failed',
        `the shell in Herdr tab ${tab.tabId} (${spec.taskId}) did not become idle; is its start-up waiting for input?`,
      );
    return tab;
  }

  private async idleOrGone(tab: LaneTab): Promise<boolean> {
    try {
      return await isShellIdle(this.place.cli, tab.paneId);
    } catch (error) {
      if (isHerdrError(error) && error.gone) return false;
      throw error;
    }
  }

  /** Types the wrapper's command and waits for its pid; typed input a shell lost is typed again. */
  private async startWrapper(spec: LaunchSpec, tab: LaneTab, files: WrapperFiles, command: string) {
    for (let n = 0; n < START_TRIES; n++) {
      // A retry after a timeout must not type into a wrapper that did start.
      if (existsSync(files.started)) break;
      if (n > 0) await waitForIdleShell(this.place.cli, tab.paneId);
      await this.place.cli.run(['pane', 'run', tab.paneId, command]);
      const deadline = Date.now() + START_WAIT_MS;
      while (!existsSync(files.started) && Date.now() < deadline) await delay(START_POLL_MS);
    }
    const deadline = Date.now() + START_WAIT_MS;
    while (existsSync(files.started) && readWrapperPid(files) === null && Date.now() < deadline)
      await delay(START_POLL_MS);
    if (readWrapperPid(files) === null)
      throw new HerdrError(
        'herdr_failed',
        `the executor of ${spec.taskId} did not start in Herdr tab ${tab.tabId}: the typed command was not run`,
      );
  }

  /** Runs `fn`, waiting and retrying while Herdr does not answer (until `deadline`). */
  private async patiently<T>(fn: () => Promise<T>, deadline = Infinity): Promise<T> {
    for (;;) {
      try {
        const result = await fn();
        this.fine();
        return result;
      } catch (error) {
        if (!isHerdrError(error) || !error.transient || this.disposed || Date.now() >= deadline) throw error;
        this.trouble(error);
        await delay(RETRY_MS);
      }
    }
  }

  private trouble(error: HerdrError): void {
    if (this.down) return;
    this.down = true;
    this.notify(
      `Herdr is not answering (${error.message}); lanes waits and retries every ${RETRY_MS / 1000} s, and keeps watching the lanes' status files`,
    );
  }

  private fine(): void {
    if (!this.down) return;
    this.down = false;
    this.notify('Herdr answers again');
  }
}
