import { describe, expect, it } from 'vitest';
import { paced } from '../../src/coordinator/loop/paced-ports.js';
import { ThreadShare } from '../../src/process/thread-share.js';

// The git and QA ports of the tick and of an attempt's end, paced (paced-ports.ts): what
// they answer is taken in a turn of the coordinator's thread, so a hundred answers that
// arrive together resume their lanes with keys and frames in between.

class Port {
  private readonly base = 'head';
  async changed(path: string): Promise<string> {
    return `${this.base}:${path}`;
  }
  async fails(): Promise<string> {
    throw new Error('git failed');
  }
  name(): string {
    return this.base;
  }
}

describe('paced ports', () => {
  it('answers as the port does: results, errors, plain methods, its own this', async () => {
    const port = paced(new Port(), new ThreadShare());
    expect(await port.changed('a')).toBe('head:a');
    await expect(port.fails()).rejects.toThrow('git failed');
    expect(port.name()).toBe('head');
    expect(paced(port)).toBe(port); // (paced once)
  });

  it('lets a key queued while many answers come back run between them', async () => {
    let now = 0;
    const share = new ThreadShare(8, () => now);
    const port = paced(new Port(), share);
    const order: string[] = [];
    const lanes = Array.from({ length: 6 }, async (_, i) => {
      await port.changed(`L${i}`);
      order.push(`L${i}`);
      if (i === 0) setImmediate(() => order.push('key')); // (pressed while the first runs)
      now += 5; // (each lane's next piece takes 5 ms)
    });
    await Promise.all(lanes);
    expect(order.indexOf('key')).toBeGreaterThan(0);
    expect(order.indexOf('key')).toBeLessThan(order.length - 1);
  });
});
