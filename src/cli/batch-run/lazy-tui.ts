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
  loading ??= withProductionReact(() => withoutFetch(() => import('./run-tui.js')));
}

/**
 * Loads with no global `fetch`: yoga (Ink's layout) loads its WebAssembly, embedded as a
 * data: URL, through `fetch` when there is one, and Node's first `fetch` loads and
 * compiles undici, then decodes the URL with it (measured: importing yoga 140-250 ms, 60-100
 * without fetch, on a loaded 2-core machine). Without fetch yoga decodes the bytes itself.
 * Put back once loaded: nothing of lanes' start fetches.
 */
async function withoutFetch<T>(load: () => Promise<T>): Promise<T> {
  const own = Object.getOwnPropertyDescriptor(globalThis, 'fetch');
  if (!own?.configurable) return load();
  Object.defineProperty(globalThis, 'fetch', { value: undefined, configurable: true, writable: true });
  try {
    return await load();
  } finally {
    Object.defineProperty(globalThis, 'fetch', own);
  }
}

export const runTui: typeof RunTui = async (...args) => {
  preloadTui();
  return (await loading!).runTui(...args);
};
