import { HostRegistry } from './host-registry.js';
import { headlessHost } from './headless-host.js';
import { herdrHost } from './herdr/herdr-host.js';
import { ptyHost } from './pty/pty-entry.js';

// The hosts lanes ships, one line each, in the order a batch without `--host` looks for
// them (DESIGN §7): inside a Herdr that answers, Herdr tabs; with a TUI, its pty panes;
// else plain child processes. Adding a host: docs/ARCHITECTURE.md, "Adding a host".

export const HOSTS = new HostRegistry([herdrHost, ptyHost, headlessHost]);
