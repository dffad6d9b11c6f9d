import type { runTui as RunTui } from './run-tui.js';
import { withProductionReact } from '../../tui/production-mode.js';

// The TUI (Ink, React, yoga) costs more to load than the rest of the CLI together: it is
// imported only when a screen is drawn, so headless runs and quick commands start fast.

let loading: Promise<typeof import('./run-tui.js')> | null = null;

/**
 * Starts loading the TUI now: `lanes start` calls it before its preflight, so the ~100 ms
 * of evaluating Ink and React overlaps the preflight's git processes instead of following
 * them (the first frame, docs/PERFORMANCE.md).
 */
export function preloadTui(): void {
  loading ??= withProductionReact(() => import('./run-tui.js'));
}

export const runTui: typeof RunTui = async (...args) => {
  preloadTui();
  return (await loading!).runTui(...args);
};
