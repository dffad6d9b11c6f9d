import { isAbsolute, join, relative } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Steward } from '../../src/coordinator/lanes/steward.js';
import { LaneWorktrees } from '../../src/git/ports/lane-worktrees.js';
import { DEFAULT_CONFIG } from '../../src/core/settings/config.js';
import { idSchema } from '../../src/core/basics/ids.js';
import { BatchFiles } from '../../src/store/batch-files.js';
import { batchPaths } from '../../src/store/state-dir.js';

// Ids never lead a path out of where it belongs (docs/RELIABILITY.md): for every batch, child
// and check id the plan accepts, the lane lies inside the lanes root (one folder per child,
// named after it) and every state file — record, report, journal, lane kernel, logs, QA
// logs, lock — inside the state dir. Ids a path could be steered with are refused.

const RUNS = Number(process.env.LANES_FUZZ_RUNS ?? 1000);
const REPO = '/work/some-repo';
const STATE = '/work/some-repo/.git/lanes';

const accepted = (id: string) => idSchema.safeParse(id).success;
/** Ids as the pattern allows them (dots and dashes included), as an attacker would write them, and random. */
const idArb = fc.oneof(
  { weight: 4, arbitrary: fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,20}$/) },
  fc.stringMatching(/^[A-Za-z0-9._\-/\\ $`;]{1,12}$/),
  fc.constantFrom(
    '..',
    '.',
    '../x',
    'a/../../b',
    'x/..',
    '/abs',
    'a\\..\\b',
    '-rf',
    'x.lock',
    'a..b',
    '.hidden',
    'ok',
  ),
  fc.string({ maxLength: 10 }),
);

const inside = (root: string, path: string) => {
  const rel = relative(root, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
};

describe('ids and the paths made from them', () => {
  it('refuses every id that could name another folder', () => {
    for (const id of [
      '',
      '.',
      '..',
      '../x',
      'a/b',
      'a\\b',
      'x/..',
      '/abs',
      'a..b',
      '-rf',
      '.hidden',
      'x.lock',
      'x.',
    ])
      expect(accepted(id), id).toBe(false);
  });

  it('keeps every lane inside the lanes root and every state file inside the state dir', () => {
    const steward = new Steward(REPO, 'b', DEFAULT_CONFIG, () => '/unused', new LaneWorktrees(REPO));
    const lanesRoot = join(REPO, '..', 'some-repo.lanes', 'b');
    let tried = 0;
    let ok = 0;
    fc.assert(
      fc.property(idArb, idArb, idArb, (batch, childId, checkId) => {
        tried++;
        if (!accepted(batch) || !accepted(childId) || !accepted(checkId)) return;
        ok++;
        const lane = steward.lanePath(childId);
        expect(relative(lanesRoot, lane)).toBe(childId);
        const paths = batchPaths(STATE, batch);
        for (const path of Object.values(paths)) expect(inside(STATE, path), path).toBe(true);
        const files = new BatchFiles(STATE, batch);
        for (const path of [
          files.tasks.path(childId),
          files.tasks.logDir(childId),
          files.qaLogPath(childId, 1, checkId),
          files.planPath,
          files.scratchDir(),
        ]) {
          expect(inside(paths.batchDir, path) || inside(join(STATE, 'scratch'), path), path).toBe(true);
        }
        expect(relative(paths.tasksDir, files.tasks.path(childId))).toBe(`${childId}.json`);
      }),
      { numRuns: RUNS },
    );
    expect(ok).toBeGreaterThan(RUNS / 10);
    expect(tried).toBe(RUNS);
  });

  it('a lanes root template with {child} in the middle still gives one folder per child', () => {
    const steward = new Steward(
      REPO,
      'b',
      { ...DEFAULT_CONFIG, lanes_root: '/tmp/l/{batch}-{child}/work' },
      () => '/x',
      new LaneWorktrees(REPO),
    );
    fc.assert(
      fc.property(idArb, (id) => {
        if (!accepted(id)) return;
        expect(steward.lanePath(id)).toBe(`/tmp/l/b-${id}/work`);
      }),
      { numRuns: RUNS },
    );
  });
});
