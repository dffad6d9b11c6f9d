import { describe, expect, it } from 'vitest';
import { LaneWatch } from '../../src/coordinator/executors/lane-watch.js';

// The periodic look at a lane's files (stall watch, scope drift) awaits git. A lane whose
// executor exits meanwhile is forgotten; what the look then finds must not come back as a
// health change of a lane that no longer runs (the TUI showed "released drift" for one).

describe('lane watch: a look that comes back after the lane ended', () => {
  it('changes nothing', async () => {
    const changes: string[] = [];
    let answer!: (look: { fingerprint: string; changed: string[] }) => void;
    let asked!: () => void;
    const lookedAt = new Promise<void>((resolve) => (asked = resolve));
    const watch = new LaneWatch({
      scopeOf: () => ['src/a.txt'],
      promptPatternsOf: () => [],
      stallTimeoutMs: 60_000,
      clock: { now: () => new Date(0) },
      worktrees: {
        lookAtFiles: () => {
          asked();
          return new Promise((resolve) => (answer = resolve));
        },
      },
      onChange: (task, _health, what) => changes.push(`${task}: ${JSON.stringify(what)}`),
    });
    watch.watch('t1', null, '/lanes/t1', 'b'.repeat(40));
    const check = watch.check();
    await lookedAt;
    watch.forget('t1'); // (its executor exited while git looked)
    answer({ fingerprint: 'x', changed: ['src/a.txt', 'elsewhere.txt'] }); // (out of scope: drift)
    await check;
    expect(changes).toEqual([]);
    expect(watch.health('t1')).toBeNull();

    // The same look of a lane still watched is a drift.
    watch.watch('t2', null, '/lanes/t2', 'b'.repeat(40));
    const again = watch.check();
    await new Promise((resolve) => setImmediate(resolve));
    answer({ fingerprint: 'x', changed: ['src/a.txt', 'elsewhere.txt'] });
    await again;
    expect(changes.length).toBeGreaterThan(0);
  });
});
