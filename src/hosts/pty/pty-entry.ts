import type { HostEntry } from '../host.js';

// The pty host's registry entry, apart from the host: its modules (xterm's and node-pty's)
// load only for a batch that uses it.

/** Chosen when lanes draws its TUI: the lanes' panes are drawn in it. */
export const ptyHost: HostEntry = {
  name: 'pty',
  summary: "pseudo-terminals drawn as panes in lanes' TUI (they end with lanes)",
  detect: ({ tuiDrawn }) => (tuiDrawn ? { use: true } : { use: false }),
  create: async ({ cols, rows }) => {
    const { PtyHost } = await import('./pty-host.js');
    return new PtyHost({ cols, rows });
  },
};
