// Ink's Output class (what a frame's cells are written into), as Ink's renderer imports it.
// Ink does not export it, so node reaches it by its file beside Ink's entry; the bundle
// links the same module directly instead (rolldown.config.mjs, "ink-output"), since a
// bundle's Ink is no file of node_modules.

/** The class, unknown in type: faster-output.ts checks its shape before it uses it. */
export async function inkOutputClass(): Promise<unknown> {
  const entry = import.meta.resolve('ink');
  const loaded = (await import(new URL('output.js', entry).href)) as { default: unknown };
  return loaded.default;
}
