import { describe, expect, it } from 'vitest';
import {
  laneAsksUser,
  laneFiles,
  laneOutput,
  laneScreen,
  newLaneLife,
  scopeDrift,
} from '../../src/core/rules/lane-health.js';
import type { LaneLife } from '../../src/core/rules/lane-health.js';

// The lane health rules as the core decides them: plain values in and out, no
// git, no processes, no timers (the times are numbers the test picks).

const STALL = 10_000;
const PROMPT = ['Allow this\\?', '\\[y/N\\]'];
const SCOPE = ['src/**'];

const stalledLife = (): LaneLife => {
  const life = newLaneLife(0);
  return laneFiles(
    laneFiles(life, { fingerprint: 'a', changed: [] }, SCOPE, 1, STALL).life,
    { fingerprint: 'a', changed: [] },
    SCOPE,
    STALL,
    STALL,
  ).life;
};

describe('when a lane is stalled', () => {
  it('is stalled once, after the timeout with no file change and no output', () => {
    const life = newLaneLife(0);
    const first = laneFiles(life, { fingerprint: 'a', changed: [] }, SCOPE, STALL - 1, STALL);
    expect(first.changes).toEqual([]);
    const second = laneFiles(first.life, { fingerprint: 'a', changed: [] }, SCOPE, STALL, STALL);
    expect(second.changes).toEqual(['stalled']);
    expect(second.life.health.stalled).toBe(true);
    const third = laneFiles(second.life, { fingerprint: 'a', changed: [] }, SCOPE, 3 * STALL, STALL);
    expect(third.changes).toEqual([]);
  });

  it('a change of its files is life: the stall ends, and the clock starts again', () => {
    const moved = laneFiles(stalledLife(), { fingerprint: 'b', changed: [] }, SCOPE, 20_000, STALL);
    expect(moved.changes).toEqual(['recovered']);
    expect(moved.life).toMatchObject({ lastLifeAt: 20_000, health: { stalled: false } });
    const soon = laneFiles(moved.life, { fingerprint: 'b', changed: [] }, SCOPE, 20_000 + STALL - 1, STALL);
    expect(soon.changes).toEqual([]);
  });

  it('output is life too, and ends the stall', () => {
    const step = laneOutput(stalledLife(), 20_000, false);
    expect(step.change).toBe('recovered');
    expect(step.life).toMatchObject({ lastLifeAt: 20_000, health: { stalled: false } });
    expect(laneOutput(step.life, 20_001, false).change).toBeNull();
  });
});

describe('when a lane waits for its user', () => {
  it('waits when the screen shows a prompt pattern, and not without patterns', () => {
    const step = laneScreen(newLaneLife(0), 'Edit src/a.ts\nAllow this?', PROMPT);
    expect(step.change).toBe('waiting');
    expect(step.life.health.waiting).toBe(true);
    expect(laneScreen(step.life, 'Allow this?', PROMPT).change).toBeNull();
    expect(laneScreen(newLaneLife(0), 'Allow this?', []).change).toBeNull();
  });

  it('recovers when the prompt is gone from the screen', () => {
    const waiting = laneScreen(newLaneLife(0), 'Continue? [y/N]', PROMPT).life;
    const step = laneScreen(waiting, 'working…', PROMPT);
    expect(step.change).toBe('recovered');
    expect(step.life.health.waiting).toBe(false);
  });

  it('output ends waiting for a plain executor, but not for one that animates its screen', () => {
    const waiting = laneAsksUser(newLaneLife(0)).life;
    expect(laneOutput(waiting, 5, false)).toMatchObject({
      change: 'recovered',
      life: { health: { waiting: false } },
    });
    expect(laneOutput(waiting, 5, true)).toMatchObject({ change: null, life: { health: { waiting: true } } });
  });

  it('the agent saying so (a hook) is waiting, told once', () => {
    const step = laneAsksUser(newLaneLife(0));
    expect(step.change).toBe('waiting');
    expect(laneAsksUser(step.life).change).toBeNull();
  });
});

describe('when a lane drifts out of its scope', () => {
  it('names the changed paths outside the scope, told when they change to some', () => {
    const life = newLaneLife(0);
    const inside = laneFiles(life, { fingerprint: 'a', changed: ['src/a.ts'] }, SCOPE, 1, STALL);
    expect(inside.changes).toEqual([]);
    const out = laneFiles(
      inside.life,
      { fingerprint: 'b', changed: ['src/a.ts', 'README.md'] },
      SCOPE,
      2,
      STALL,
    );
    expect(out.changes).toEqual(['drift']);
    expect(out.life.health.drift).toEqual(['README.md']);
    const same = laneFiles(
      out.life,
      { fingerprint: 'c', changed: ['README.md', 'src/a.ts'] },
      SCOPE,
      3,
      STALL,
    );
    expect(same.changes).toEqual([]);
    const back = laneFiles(same.life, { fingerprint: 'd', changed: ['src/a.ts'] }, SCOPE, 4, STALL);
    expect(back.changes).toEqual([]);
    expect(back.life.health.drift).toEqual([]);
  });

  it('scopeDrift keeps the order it was given', () => {
    expect(scopeDrift(['b.md', 'src/x.ts', 'a.md'], SCOPE)).toEqual(['b.md', 'a.md']);
  });
});
