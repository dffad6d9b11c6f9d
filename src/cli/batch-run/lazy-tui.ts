import type { runTui as RunTui } from './run-tui.js';
import { withProductionReact } from '../../tui/production-mode.js';

// The TUI (Ink, React, yoga) costs more to load than the rest of the CLI together: it is
// imported only when a screen is drawn, so headless runs and quick commands start fast.

export const runTui: typeof RunTui = async (...args) =>
  (await withProductionReact(() => import('./run-tui.js'))).runTui(...args);
