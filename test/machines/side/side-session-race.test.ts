import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sessionName } from '../../../src/machines/protocol.js';
import { tempDir } from '../../helpers/repo.js';
import { batchId, machine } from './side.js';

// Sessions started side by side on a new machine while others end there. Two races, each
// seen failing a start (4 of 72 and 1 of 72 before their fixes):
// - the first ops on a machine each make the repository's cache, and two `git init` of one
//   folder at once fail on its config's lock;
// - tmux ends its server when its last session ends, and a `new-session` that reaches the
//   server as it goes fails with "server exited unexpectedly" (having made no session).
// The tmux server here is this test's own (TMUX_TMPDIR), so that it empties whenever its
// sessions have ended: lanes' shared server stays up while any other test has one on it.

const ROUNDS = 12;
const AT_ONCE = 6;

describe('the side script: sessions started side by side while others end', () => {
  it('starts every session, however the ends of the others fall', async () => {
    const m = machine('repo-000000000002');
    const env = { TMUX_TMPDIR: tempDir('lanes-tmux-') };
    const batch = batchId('race');
    const work = join(m.root, 'work');
    mkdirSync(work, { recursive: true });
    const failures: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const starts = Array.from({ length: AT_ONCE }, (_, i) => {
        const name = sessionName(batch, `c${i}`, `r${round}`, 1);
        const run = join(m.root, 'runs', batch, `c${i}-${round}`);
        return m
          .call(
            'session.start',
            { name, cwd: work, argv: ['true'], env: {}, log: join(run, 'log'), status: join(run, 'status') },
            env,
          )
          .catch((error: Error) => failures.push(error.message.split('\n')[0]!));
      });
      await Promise.all(starts);
    }
    expect(failures).toEqual([]);
    await m.call('batch.clean', { batch }, env);
  });
});
