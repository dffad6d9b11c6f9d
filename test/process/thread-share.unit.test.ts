import { describe, expect, it } from 'vitest';
import { ThreadShare } from '../../src/process/thread-share.js';

// The coordinator's thread shared with the TUI (process/thread-share.ts): pieces of work
// that wait their turn run a share of each turn of the event loop, and what else waits
// there (a key, a frame) runs in between, not after all of them.

/** A clock the pieces move: each piece "takes" `ms`. */
function clock() {
  const c = { now: 0, take: (ms: number) => (c.now += ms) };
  return c;
}

describe('thread share', () => {
  it('runs a key queued behind many pieces after the first share of them, not after all', async () => {
    const time = clock();
    const share = new ThreadShare(8, () => time.now);
    const order: string[] = [];
    const pieces = Array.from({ length: 10 }, async (_, i) => {
      await share.turn();
      order.push(`p${i}`);
      time.take(3);
    });
    setImmediate(() => order.push('key')); // (a key read while they wait)
    await Promise.all(pieces);
    expect(order).toEqual(['p0', 'p1', 'p2', 'key', 'p3', 'p4', 'p5', 'p6', 'p7', 'p8', 'p9']);
  });

  it('keeps the order of the pieces, and lets each piece of a lane follow the one before', async () => {
    const time = clock();
    const share = new ThreadShare(8, () => time.now);
    const order: string[] = [];
    const lane = async (name: string) => {
      for (const step of ['exit', 'qa', 'deliver']) {
        await share.turn();
        order.push(`${name}:${step}`);
        time.take(5);
      }
    };
    await Promise.all([lane('A'), lane('B')]);
    expect(order.filter((o) => o.startsWith('A'))).toEqual(['A:exit', 'A:qa', 'A:deliver']);
    expect(order.filter((o) => o.startsWith('B'))).toEqual(['B:exit', 'B:qa', 'B:deliver']);
    expect(order.slice(0, 2)).toEqual(['A:exit', 'B:exit']);
  });

  it('runs a piece at once in a turn with share left, and one a turn when each takes longer', async () => {
    const time = clock();
    const share = new ThreadShare(8, () => time.now);
    const order: string[] = [];
    const pieces = [0, 1, 2].map(async (i) => {
      await share.turn();
      order.push(`p${i}`);
      time.take(20);
      setImmediate(() => order.push(`after p${i}`));
    });
    await Promise.all(pieces);
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(['p0', 'after p0', 'p1', 'after p1', 'p2', 'after p2']);
    expect(share.pending).toBe(0);
  });
});
