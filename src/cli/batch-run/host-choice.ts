import type { Host } from '../../hosts/host.js';
import type { HostRegistry } from '../../hosts/host-registry.js';
import { HOSTS } from '../../hosts/hosts.js';

// Which host runs a batch's executors, and whether a TUI is drawn: apart from run-batch.ts
// (the coordinator's modules), so that `lanes start` knows them before its confirmation
// without loading the coordinator (docs/PERFORMANCE.md "first frame, session 12").

/** A host's registry name (src/hosts/hosts.ts): which are known is the registry's to say. */
export type HostName = string;

/** `--host`'s value, checked against the registry (exit 2 naming the hosts it knows). */
export function parseHost(value: string | undefined, hosts: HostRegistry = HOSTS): HostName | undefined {
  return hosts.parse(value);
}

/** DESIGN §7: --host when given; else the first host of the registry that says it fits here. */
export function chooseHost(
  explicit: HostName | undefined,
  tuiDrawn: boolean,
  hosts: HostRegistry = HOSTS,
): HostName {
  return hosts.choose(explicit, { tuiDrawn, env: process.env }, (line) =>
    process.stderr.write(`lanes: ${line}\n`),
  );
}

/** `notify` hears what a host has to say mid-batch (the Herdr host: "Herdr is not answering"). */
export function makeHost(
  name: HostName,
  notify: (text: string) => void = () => {},
  hosts: HostRegistry = HOSTS,
): Promise<Host> {
  return hosts.create(name, {
    notify,
    cols: process.stdout.columns || 120,
    rows: Math.max(10, (process.stdout.rows || 40) - 12),
  });
}

/** The TUI is drawn on a terminal unless --headless says otherwise (DESIGN §9). */
export function drawsTui(headless: boolean | undefined): boolean {
  return !headless && process.stdin.isTTY === true && process.stdout.isTTY === true;
}
