import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { noBatchesHere } from '../../src/store/no-batches.js';
import { BatchStore } from '../../src/store/batch-store.js';
import { tempDir } from '../helpers/repo.js';

// `lanes start` skips loading the batch store only where the store itself would find no
// batch: its answer there is "none" (a null record, an empty list), and everywhere else the
// store is asked (it reads the batches, or refuses a symlink).

/** What the store answers for batch `first` in `stateDir`: its record and list, or its refusal. */
function storeSays(stateDir: string): string {
  const store = new BatchStore(stateDir);
  try {
    return JSON.stringify({ record: store.read('first'), list: store.list() });
  } catch (error) {
    return `refused: ${(error as Error).message.split(' ')[0]}`;
  }
}

const NONE = JSON.stringify({ record: null, list: [] });

describe('noBatchesHere', () => {
  it('is true only where the store finds no batch', () => {
    const root = tempDir();
    const cases: [string, () => string][] = [
      ['no state directory', () => join(root, 'missing')],
      ['an empty state directory', () => mkdir(join(root, 'empty'))],
      ['a batches folder without records', () => (mkdir(join(root, 'bare', 'batches')), join(root, 'bare'))],
      [
        'a record',
        () => {
          mkdir(join(root, 'one', 'batches'));
          writeFileSync(join(root, 'one', 'batches', 'first.json'), '{}');
          return join(root, 'one');
        },
      ],
      [
        'a symlinked state directory',
        () => {
          mkdir(join(root, 'real'));
          symlinkSync(join(root, 'real'), join(root, 'link'));
          return join(root, 'link');
        },
      ],
      [
        'a file where the state directory goes',
        () => (writeFileSync(join(root, 'file'), ''), join(root, 'file')),
      ],
    ];
    const seen = cases.map(([name, make]) => {
      const dir = make();
      return { name, skipped: noBatchesHere(dir), storeFindsNone: storeSays(dir) === NONE };
    });
    for (const c of seen) if (c.skipped) expect(c).toEqual({ ...c, storeFindsNone: true });
    expect(seen.filter((c) => c.skipped).map((c) => c.name)).toEqual([
      'no state directory',
      'an empty state directory',
    ]);
  });
});

function mkdir(dir: string): string {
  mkdirSync(dir, { recursive: true });
  return dir;
}
