import { describe, expect, it } from 'vitest';
import { git } from '../../helpers/repo.js';
import { lanesInProcess, leanRepo, readJournal, readRecord, writePlan } from './support.js';

// Issue 24, item 14: a file whose name holds a newline, inside the child's scope, was called
// outside it. Paths are read from git NUL-separated and matched with newlines as characters.

describe('a name with a newline inside the scope', () => {
  it('is inside it: QA passes and the file is delivered', async () => {
    const repo = await leanRepo();
    const plan = writePlan({
      batch: 'nl',
      executor: 'script',
      children: [
        {
          id: 'N',
          goal: 'a file with a newline in its name',
          scope: ['s/'],
          acceptance: [{ id: 'ok', run: ['true'] }],
          run: "mkdir -p 's/x\ny' && printf 'one\\n' > 's/a\nb.txt' && printf 'two\\n' > 's/x\ny/c.txt'",
        },
      ],
    });
    const r = await lanesInProcess(['-C', repo, 'start', plan, '--yes', '--headless']);
    const qa = readJournal(repo, 'nl').entries.filter((e) => e.event.startsWith('qa-'));
    expect(qa.map((e) => e.outside_scope)).toEqual([[]]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(readRecord(repo, 'nl')!.batch_state).toBe('completed');
    expect(await git(repo, 'show', 'batch/nl:s/a\nb.txt')).toBe('one');
    expect(await git(repo, 'show', 'batch/nl:s/x\ny/c.txt')).toBe('two');
  }, 120_000);
});
