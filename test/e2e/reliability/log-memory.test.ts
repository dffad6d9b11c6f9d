import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { CLI } from '../../helpers/repo.js';
import { lanesProcess, leanRepo, writePlan } from './support.js';

// `lanes log --task` of a lane that printed tens of megabytes (docs/RELIABILITY.md,
// "Adversarial pass", item 14): it read each transcript whole, several copies of it at once
// (235 MB of memory for a 60 MB transcript, measured). It streams them a megabyte at a time
// (94 MB for the same); this checks that every byte still comes out, in a small heap.

describe('lanes log --task of a large transcript', () => {
  it('prints it all within a small heap', async () => {
    const repo = await leanRepo();
    const plan = writePlan({
      batch: 'loud',
      executor: 'script',
      children: [
        {
          id: 'A',
          goal: 'print 40 MB',
          scope: ['a.txt'],
          acceptance: [{ id: 'a', run: ['test', '-f', 'a.txt'] }],
          run: "head -c 40000000 /dev/zero | tr '\\0' x | fold -w 99; echo a > a.txt",
        },
      ],
    });
    const run = await lanesProcess(['-C', repo, 'start', plan, '--yes', '--headless']);
    expect(run.exitCode, run.stderr).toBe(0);
    const log = execa(
      process.execPath,
      ['--max-old-space-size=48', CLI, '-C', repo, 'log', 'loud', '--task', 'A'],
      {
        reject: false,
        buffer: false,
        stdin: 'ignore',
      },
    );
    // Lines of x only (the file's bytes), counted as they come, never held whole.
    let xs = 0;
    let partial = '';
    log.stdout!.setEncoding('utf8');
    log.stdout!.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop()!;
      for (const line of lines) if (/^x+$/.test(line)) xs += line.length;
    });
    const done = await log;
    expect(done.exitCode).toBe(0);
    expect(xs).toBe(40_000_000);
  }, 120_000);
});
