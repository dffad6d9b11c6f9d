import { describe, expect, it } from 'vitest';
import { mayMoveToBase, provisionFailure, provisionStep } from '../../src/core/rules/lane-provision.js';
import type { LaneSpot } from '../../src/core/rules/lane-provision.js';

// What the steward does with a provision handoff, as the core decides it: no git, no lanes.

const want = { path: '/l/b/a', branch: 'lane/b/a', base: 'b'.repeat(40) };
const lane = (over: Partial<Extract<LaneSpot, { kind: 'worktree' }>> = {}): LaneSpot => ({
  kind: 'worktree',
  branch: want.branch,
  head: want.base,
  clean: true,
  ...over,
});

describe('provisionStep', () => {
  it('adds a new worktree on a new branch at a free path', () => {
    expect(provisionStep(want, { kind: 'free', branchTip: null, tipOnBase: false })).toEqual({
      kind: 'add',
      branchExists: false,
    });
  });

  it('adds it on an existing lane branch whose commits are all on the base (reset to the base)', () => {
    expect(provisionStep(want, { kind: 'free', branchTip: 'c'.repeat(40), tipOnBase: true })).toEqual({
      kind: 'add',
      branchExists: true,
    });
  });

  it('refuses a lane branch with commits that are not on the batch branch: never reset away', () => {
    const step = provisionStep(want, { kind: 'free', branchTip: 'c'.repeat(40), tipOnBase: false });
    expect(step).toEqual({
      kind: 'fail',
      reason: 'branch lane/b/a already exists with commits that are not on the batch branch',
    });
  });

  it('refuses a path that holds something other than a worktree of the repository', () => {
    expect(provisionStep(want, { kind: 'not-a-worktree' })).toEqual({
      kind: 'fail',
      reason: '/l/b/a exists and is not a worktree of this repository',
    });
  });

  it('reuses a clean lane left at the base from before a crash', () => {
    expect(provisionStep(want, lane())).toEqual({ kind: 'reuse' });
  });

  it('moves a clean lane on an older base, failing with a reason of its own if refused', () => {
    expect(provisionStep(want, lane({ head: 'a'.repeat(40) }))).toEqual({
      kind: 'move-to-base',
      ifRefused: '/l/b/a already exists with commits of its own',
    });
  });

  it('refuses a worktree on another branch or detached, naming which', () => {
    expect(provisionStep(want, lane({ branch: 'main' }))).toEqual({
      kind: 'fail',
      reason: '/l/b/a is a worktree on main',
    });
    expect(provisionStep(want, lane({ branch: null }))).toEqual({
      kind: 'fail',
      reason: '/l/b/a is a worktree on a detached HEAD',
    });
  });

  it('refuses a lane with changes in it (they are not lanes’ to take), even at the base', () => {
    expect(provisionStep(want, lane({ clean: false }))).toEqual({
      kind: 'fail',
      reason: '/l/b/a already exists with changes in it',
    });
    // The branch is looked at first: a dirty worktree of another branch is named by its branch.
    expect(provisionStep(want, lane({ clean: false, branch: 'x' }))).toMatchObject({
      reason: '/l/b/a is a worktree on x',
    });
  });
});

describe('provisionFailure', () => {
  it('is what the tick parks the child with', () => {
    expect(provisionFailure('boom')).toBe('lane setup failed: boom');
  });
});

describe('mayMoveToBase', () => {
  it('moves only a lane whose HEAD is known and on the base', () => {
    expect(mayMoveToBase('a'.repeat(40), true)).toBe(true);
    expect(mayMoveToBase('a'.repeat(40), false)).toBe(false);
    expect(mayMoveToBase(null, true)).toBe(false);
  });
});
