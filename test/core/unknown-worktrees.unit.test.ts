import { describe, expect, it } from 'vitest';
import { unknownWorktrees } from '../../src/core/rules/unknown-worktrees.js';

// Which worktrees the coordinator reports as unknown when it starts: no git, no lanes.

const tree = (path: string, branch: string | null, real = path) => ({ path, head: null, branch, real });

describe('unknownWorktrees', () => {
  const facts = {
    lanesRoot: '/l/b',
    known: new Set(['/l/b/a']),
    batchId: 'b',
  };

  it('reports a worktree under the lanes root that the record does not know', () => {
    const found = unknownWorktrees({ ...facts, worktrees: [tree('/l/b/x', 'feature')] });
    expect(found).toEqual([{ path: '/l/b/x', head: null, branch: 'feature' }]);
  });

  it('leaves out known lanes, worktrees elsewhere, and the root itself', () => {
    const worktrees = [
      tree('/l/b/a', 'lane/b/a'),
      tree('/repo', 'main'),
      tree('/l/b', null),
      tree('/l/bb/x', null),
    ];
    expect(unknownWorktrees({ ...facts, worktrees })).toEqual([]);
  });

  it('compares real paths: a known lane reached through a symlink is known', () => {
    const worktrees = [tree('/link/a', 'feature', '/l/b/a'), tree('/link/y', 'feature', '/l/b/y')];
    expect(unknownWorktrees({ ...facts, worktrees }).map((w) => w.path)).toEqual(['/link/y']);
  });

  it('is no stranger when on one of this batch’s lane branches (provisioned before a crash, reused)', () => {
    const worktrees = [tree('/l/b/c', 'lane/b/c'), tree('/l/b/d', 'lane/other/d')];
    expect(unknownWorktrees({ ...facts, worktrees }).map((w) => w.path)).toEqual(['/l/b/d']);
  });
});
