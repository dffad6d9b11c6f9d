// How the app is rendered by Ink: one place for `lanes` (src/cli/run-tui.ts) and the keystroke
// benchmark, so the benchmark measures what users get.

/**
 * Ink's own frame limit, far above the store's REDRAW_HZ on purpose: the store already
 * limits how often pane output redraws, so Ink's limit only decides how long a key pressed
 * just after a pane redraw waits for its frame slot. With six panes streaming, 120 fps (an 8 ms slot)
 * gave keystroke p95 33-35 ms against 44-49 ms at 60 fps (bench keystroke_latency, three
 * runs each); 240 fps was no better.
 */
export const INK_MAX_FPS = 120;

export const INK_OPTIONS = { exitOnCtrlC: false, patchConsole: false, maxFps: INK_MAX_FPS } as const;
