import { describe, expect, it, vi } from 'vitest';
import { processHelper } from '../../src/git/runner/git-helper.js';
import { git } from '../../src/git/runner/git.js';
import { makeRepo } from '../helpers/repo.js';
import { until } from '../helpers/until.js';

// `lanes start` showed its confirmation ~350 ms after it started, and a third of that was its
// preflight's git waiting for the process helper's node start-up (issue 28, first_frame).
// Until the helper says it has started, git that may run beside other git runs in-process;
// from then on in the helper (off the main thread, where the TUI draws).

describe('git while the process helper starts', () => {
  it('runs in-process until the helper is ready (the first call starts it), then in the helper', async () => {
    const repo = await makeRepo();
    const helper = processHelper()!;
    const run = vi.spyOn(helper, 'run');
    expect(helper.ready).toBe(false);
    expect((await git(repo, ['rev-parse', '--is-inside-work-tree'])).stdout).toBe('true\n');
    expect(run).not.toHaveBeenCalled();
    expect((await git(repo, ['worktree', 'list', '--porcelain'])).stdout).toContain('worktree ');
    expect(run).not.toHaveBeenCalled();
    await until(() => helper.ready, 'the helper to say it is ready');
    expect((await git(repo, ['rev-parse', '--is-inside-work-tree'])).stdout).toBe('true\n');
    expect(run).toHaveBeenCalledTimes(1);
    // (worktree bookkeeping too, once none started in-process is still running)
    expect((await git(repo, ['worktree', 'list', '--porcelain'])).stdout).toContain('worktree ');
    expect(run).toHaveBeenCalledTimes(2);
  });
});
