import { realpathSync } from 'node:fs';
import type { HerdrCli } from './herdr-cli.js';
import { isHerdrError } from './herdr-cli.js';

// Lane tabs in Herdr: made, found again, and checked for an idle shell. A lane's tab is
// labelled with its child id and rooted at its lane, which is how it is found again when
// lanes has no id for it (a restart, a retried create); the label alone is not enough
// (another batch may have a child of the same name), so the root pane's cwd must match.

export interface LaneTab {
  tabId: string;
  paneId: string;
}

interface TabInfo {
  tab_id: string;
  label?: string | null;
}

interface PaneInfo {
  pane_id: string;
  tab_id: string;
  cwd?: string | null;
  foreground_cwd?: string | null;
}

interface ProcessInfo {
  shell_pid: number;
  foreground_process_group_id: number | null;
  foreground_processes: { pid: number }[];
}

/** What the kernel records as the attempt's pane id: both ids, since a tab is what lanes closes. */
export function formatLaneRef(tab: LaneTab): string {
  return `${tab.tabId}|${tab.paneId}`;
}

/** Reads a recorded ref; a bare pane id (no tab) is accepted too. */
export function parseLaneRef(ref: string): { tabId: string | null; paneId: string } {
  const bar = ref.indexOf('|');
  return bar < 0 ? { tabId: null, paneId: ref } : { tabId: ref.slice(0, bar), paneId: ref.slice(bar + 1) };
}

export async function createLaneTab(
  cli: HerdrCli,
  workspaceId: string,
  cwd: string,
  label: string,
  env: Record<string, string>,
): Promise<LaneTab> {
  const envArgs = Object.entries(env).flatMap(([k, v]) => ['--env', `${k}=${v}`]);
  const args = ['tab', 'create', '--workspace', workspaceId, '--cwd', cwd, '--label', label];
  const created = await cli.json<{ tab: TabInfo; root_pane: PaneInfo }>([...args, ...envArgs, '--no-focus']);
  return { tabId: created.tab.tab_id, paneId: created.root_pane.pane_id };
}

/** The pane's facts, or null when Herdr says it is gone. */
export async function paneInfo(cli: HerdrCli, paneId: string): Promise<PaneInfo | null> {
  try {
    return (await cli.json<{ pane: PaneInfo }>(['pane', 'get', paneId])).pane;
  } catch (error) {
    if (isHerdrError(error) && error.gone) return null;
    throw error;
  }
}

/** A tab in the workspace labelled `label` whose root pane is rooted at `cwd`. */
export async function findLaneTab(
  cli: HerdrCli,
  workspaceId: string,
  label: string,
  cwd: string,
): Promise<LaneTab | null> {
  const { tabs } = await cli.json<{ tabs: TabInfo[] }>(['tab', 'list', '--workspace', workspaceId]);
  const labelled = tabs.filter((t) => t.label === label);
  if (labelled.length === 0) return null;
  const { panes } = await cli.json<{ panes: PaneInfo[] }>(['pane', 'list', '--workspace', workspaceId]);
  const want = samePath(cwd);
  for (const tab of labelled) {
    const pane = panes.find((p) => p.tab_id === tab.tab_id && (want(p.cwd) || want(p.foreground_cwd)));
    if (pane) return { tabId: tab.tab_id, paneId: pane.pane_id };
  }
  return null;
}

function samePath(path: string): (other: string | null | undefined) => boolean {
  const real = realOrSelf(path);
  return (other) => !!other && (other === path || realOrSelf(other) === real);
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * Herdr's own "available shell" test (reference step 4): the shell owns the terminal's
 * foreground and nothing else runs in it. Typing earlier can be lost or run late.
 */
export async function isShellIdle(cli: HerdrCli, paneId: string): Promise<boolean> {
  const { process_info: info } = await cli.json<{ process_info: ProcessInfo }>([
    'pane',
    'process-info',
    '--pane',
    paneId,
  ]);
  return (
    info.foreground_process_group_id === info.shell_pid &&
    info.foreground_processes.every((p) => p.pid === info.shell_pid)
  );
}

/** How often, how many times in a row, and how long lanes looks for an idle shell. */
export const IDLE_POLL_MS = 100;
export const IDLE_SAMPLES = 3;
export const IDLE_DEADLINE_MS = 20_000;

export async function waitForIdleShell(cli: HerdrCli, paneId: string): Promise<boolean> {
  const deadline = Date.now() + IDLE_DEADLINE_MS;
  let inARow = 0;
  while (Date.now() < deadline) {
    inARow = (await isShellIdle(cli, paneId)) ? inARow + 1 : 0;
    if (inARow >= IDLE_SAMPLES) return true;
    await delay(IDLE_POLL_MS);
  }
  return false;
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
