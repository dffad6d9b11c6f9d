import { lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/repo.js';
import { readJournal, fileChild, lanesProcess, leanRepo, stateDir, writePlan } from './support.js';

// Issue 24, item 7: a symbolic link planted in the state dir where lanes writes a log — the
// executor's transcript (`attempt-1.log`, appended to) or a QA log (`qa-1-exists.log`,
// written over) — must not be followed: its target keeps its bytes.

const cases = [
  ['attempt-1.log', 'an executor transcript'],
  ['qa-1-exists.log', 'a QA log'],
] as const;

describe('symbolic links in the state dir are not followed for logs', () => {
  for (const [name, what] of cases) {
    it(`${what} (${name}) planted as a link leaves its target alone`, async () => {
      const repo = await leanRepo();
      const batch = name.startsWith('qa') ? 'lq' : 'la';
      const plan = writePlan({
        batch,
        executor: 'script',
        children: [fileChild('A', [], 'echo executor output; ')],
      });
      const made = await lanesProcess(['-C', repo, 'start', plan, '--yes', '--no-run']);
      expect(made.exitCode, made.stderr).toBe(0);
      const target = join(tempDir('lanes-target-'), 'precious.txt');
      writeFileSync(target, 'precious\n');
      const logs = join(stateDir(repo), 'batches', batch, 'logs', 'A');
      mkdirSync(logs, { recursive: true });
      symlinkSync(target, join(logs, name));
      const r = await lanesProcess(['-C', repo, 'resume', batch, '--headless']);
      expect(readFileSync(target, 'utf8')).toBe('precious\n');
      expect(lstatSync(join(logs, name)).isSymbolicLink()).toBe(true);
      // The attempt whose log could not be opened does not pass; the next one, with a log
      // of its own, completes the batch.
      const qa = readJournal(repo, batch).entries.filter((e) => e.event.startsWith('qa-'));
      expect(qa.map((e) => [e.event, e.qa_run])).toEqual([
        ['qa-failed', 1],
        ['qa-passed', 2],
      ]);
      expect(r.exitCode, r.stderr).toBe(0);
    }, 120_000);
  }
});
