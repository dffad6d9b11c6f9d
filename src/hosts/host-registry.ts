import { badInput } from '../core/basics/errors.js';
import type { Host, HostEntry, HostMaking, HostSurroundings } from './host.js';

// The hosts lanes knows, in the order it prefers them: `--host` is parsed against their
// names, a batch without `--host` gets the first whose `detect` says use, and a host is made
// by its entry. Nothing outside src/hosts names a host; the built-in list is src/hosts/hosts.ts.

export class HostRegistry {
  constructor(readonly entries: readonly HostEntry[]) {
    const names = entries.map((e) => e.name);
    const twice = names.find((n, i) => names.indexOf(n) !== i);
    if (twice) throw new Error(`two hosts are named ${twice}`);
  }

  get names(): string[] {
    return this.entries.map((e) => e.name);
  }

  /** `--host`'s value: one of the names, or a usage error (exit 2) that lists them. */
  parse(value: string | undefined): string | undefined {
    if (value === undefined) return undefined;
    if (this.names.includes(value)) return value;
    throw badInput('usage', `--host must be ${spoken(this.names)}, got "${value.slice(0, 40)}"`);
  }

  /**
   * `explicit` when given; else the first host whose detect says use. `tell` hears why a
   * host that was looked for was not taken ("HERDR_ENV=1 but Herdr cannot be driven").
   */
  choose(explicit: string | undefined, where: HostSurroundings, tell: (line: string) => void): string {
    if (explicit !== undefined) return this.entry(explicit).name;
    const whys: string[] = [];
    for (const entry of this.entries) {
      const found = entry.detect(where);
      if (found.use) {
        for (const why of whys) tell(`${why}; using the ${entry.name} host`);
        return entry.name;
      }
      if (found.why) whys.push(found.why);
    }
    throw new Error(`no host can run here: ${whys.join('; ') || 'none of them said why'}`);
  }

  /** Makes the host, and holds it to its word: one whose executors outlive lanes must reattach. */
  async create(name: string, making: HostMaking): Promise<Host> {
    const host = await this.entry(name).create(making);
    if (host.capabilities.outlivesLanes && typeof host.reattach !== 'function') {
      await host.dispose();
      throw new Error(`the ${name} host says its executors outlive lanes but has no reattach`);
    }
    return host;
  }

  /** A registry with `more` (a host of a test, say) before these: detect asks it first. */
  with(...more: HostEntry[]): HostRegistry {
    return new HostRegistry([...more, ...this.entries]);
  }

  private entry(name: string): HostEntry {
    const entry = this.entries.find((e) => e.name === name);
    if (!entry) throw badInput('usage', `--host must be ${spoken(this.names)}, got "${name.slice(0, 40)}"`);
    return entry;
  }
}

/** ['a', 'b', 'c'] → "a, b or c". */
function spoken(names: readonly string[]): string {
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}
