// How the app is rendered by Ink: one place for `lanes` (src/cli/run-tui.ts) and the keystroke
// benchmark, so the benchmark measures what users get.

/**
 * Ink's own frame limit, far above the store's REDRAW_HZ on purpose: the store already
 * limits how often pane output redraws (src/tui/redraw-pace.ts), so Ink's limit only decides
 * how long a key pressed just after another frame waits for its own. At 120 fps (an 8 ms
 * slot) a key's frame waited for a timer, and so for everything the coordinator's thread had
 * queued meanwhile: with a hundred lanes integrating, 10-40 ms. At 1000 fps it is drawn as
 * soon as its render is committed (many_lanes, four alternating runs each: keystroke p95 while
 * they integrate 45-56 ms at 120 fps, 36-49 at 1000; docs/PERFORMANCE.md "Keys drawn at once").
 */
export const INK_MAX_FPS = 1000;

export const INK_OPTIONS = { exitOnCtrlC: false, patchConsole: false, maxFps: INK_MAX_FPS } as const;
