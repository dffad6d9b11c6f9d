import { lstatSync } from 'node:fs';
import { batchesDir } from './state-dir.js';

/**
 * Whether the state directory holds no batch at all, as the batch store would find it: no
 * state directory, or one (not a symlink) without a `batches` folder. Then the store's read
 * of a record is null and its list empty, and `lanes start`'s preflight need not load the
 * store (its record schemas) before the first frame. Anything else (a batch, a symlink the
 * store refuses) is the store's to read.
 */
export function noBatchesHere(stateDir: string): boolean {
  const dir = lstatSync(stateDir, { throwIfNoEntry: false });
  if (!dir) return true;
  if (!dir.isDirectory()) return false;
  return lstatSync(batchesDir(stateDir), { throwIfNoEntry: false }) === undefined;
}
