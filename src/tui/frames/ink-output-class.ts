// Ink's Output class (what a frame's cells are written into), as Ink's renderer imports it.
// Ink does not export it, so node reaches it by its file beside Ink's entry; the bundle
// links the same module directly instead (rolldown.config.mjs, "ink-output"), since a
// bundle's Ink is no file of node_modules.

import type { OutputClass } from './faster-output.js';

export async function inkOutputClass(): Promise<OutputClass> {
  const entry = import.meta.resolve('ink');
  const loaded = (await import(new URL('output.js', entry).href)) as { default: OutputClass };
  return loaded.default;
}
