import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// Which parts of lanes a loaded module holds, by a mark of each in its text (the tests of
// what a start loads, with test/fixtures/module-log.mjs): node-pty by its path.

/** The names of `parts` whose mark the module at `url` holds. */
export function partsOf(url: string, parts: readonly [string, RegExp][]): string[] {
  if (url.includes('/node_modules/node-pty/')) return ['node-pty'];
  if (!url.startsWith('file:')) return [];
  const path = fileURLToPath(url);
  if (!path.endsWith('.js') || !existsSync(path)) return [];
  const text = readFileSync(path, 'utf8');
  return parts.filter(([, mark]) => mark.test(text)).map(([name]) => name);
}
