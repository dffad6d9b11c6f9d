import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { git, tempDir } from '../../helpers/repo.js';
import { LAND_BATCH, landProblems, landTemplate } from './land-crash.js';
import { copyRepo, lanesProcess } from './support.js';

// Issue 24, item 4, from the user's side: `lanes land --merge` killed (kill -9) after the
// branch moved and before the worktree followed — here a git on PATH that kills lanes when
// it is asked to update the worktree — then `lanes land --merge` again finishes it.

describe('kill -9 during lanes land --merge', () => {
  it('a second land brings the checked-out worktree onto the landed branch', async () => {
    const repo = copyRepo(await landTemplate());
    const moved = (await git(repo, 'rev-parse', 'main')).trim();
    const realGit = (await execa('sh', ['-c', 'command -v git'])).stdout.trim();
    const shim = tempDir('lanes-shim-');
    // The worktree update (`read-tree -m -u`, not the dry run) kills its caller first.
    writeFileSync(
      join(shim, 'git'),
      [
        '#!/bin/sh',
        'case " $* " in *" read-tree "*" -u "*) case " $* " in *" -n "*) ;; *)',
        // (git runs under lanes' helper process: the CLI is the nearest ancestor running main.js)
        '  p=$PPID; while [ "$p" -gt 1 ]; do',
        '    grep -q "lanes/main.js" /proc/$p/cmdline 2>/dev/null && { kill -9 $p; exit 1; }',
        "    p=$(awk '{print $4}' /proc/$p/stat); done; exit 1;;",
        'esac;; esac',
        `exec ${realGit} "$@"`,
        '',
      ].join('\n'),
    );
    chmodSync(join(shim, 'git'), 0o755);
    const killed = await lanesProcess(['-C', repo, 'land', LAND_BATCH, '--merge'], {
      PATH: `${shim}:${process.env.PATH ?? ''}`,
    });
    expect(killed.signal).toBe('SIGKILL');
    expect(await git(repo, 'status', '--porcelain')).not.toBe(''); // the worktree kept the old tree

    const again = await lanesProcess(['-C', repo, 'land', LAND_BATCH, '--merge']);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(await landProblems(repo, moved)).toEqual([]);
  }, 120_000);
});
