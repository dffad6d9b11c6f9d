import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HookChannel } from '../../src/coordinator/turns/hook-channel.js';
import { until } from '../helpers/until.js';

// Issue 24, items 9 and 14, on a real unix socket: ~20k idle connections exhausted the
// coordinator's descriptors. An idle or slow connection is closed after a while, at most so
// many are open at once, "message too large" is journaled as any bad message is, and the
// private dir made when /tmp/lanes-hooks-<uid> cannot be used is removed with the channel.

const open: HookChannel[] = [];
const clients: Socket[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.destroy();
  for (const ch of open.splice(0)) await ch.close();
});

function channel(bad: string[], options?: { idleMs?: number; maxConnections?: number }): HookChannel {
  const ch = new HookChannel(
    () => Promise.resolve({ verdict: 'stop', why: 'test' } as never),
    (problem) => bad.push(problem),
    options,
  );
  open.push(ch);
  return ch;
}

function client(path: string): { socket: Socket; closed: () => boolean; data: () => string } {
  const socket = connect(path);
  clients.push(socket);
  let closed = false;
  let data = '';
  socket.on('data', (d) => (data += d.toString()));
  socket.on('error', () => {});
  socket.on('close', () => (closed = true));
  return { socket, closed: () => closed, data: () => data };
}

describe('the hook channel under a flood', () => {
  it('closes an idle connection after its idle time', async () => {
    const ch = channel([], { idleMs: 300 });
    const path = await ch.open(`idle-${process.pid}-${Date.now()}`);
    const c = client(path);
    await until(() => c.closed(), 'the idle connection to be closed', { timeoutMs: 5000 });
  });

  it('holds at most maxConnections at once: the rest are closed at once', async () => {
    const ch = channel([], { maxConnections: 8, idleMs: 60_000 });
    const path = await ch.open(`cap-${process.pid}-${Date.now()}`);
    const cs = Array.from({ length: 60 }, () => client(path));
    await until(() => cs.filter((c) => c.closed()).length >= 52, 'the connections over the cap to close', {
      timeoutMs: 10_000,
    });
    expect(cs.filter((c) => !c.closed()).length).toBeLessThanOrEqual(8);
  });

  it('journals "message too large" and answers it once', async () => {
    const bad: string[] = [];
    const ch = channel(bad);
    const path = await ch.open(`big-${process.pid}-${Date.now()}`);
    const c = client(path);
    await new Promise<void>((resolve) => c.socket.once('connect', () => resolve()));
    c.socket.write('x'.repeat(1024 * 1024 + 10));
    await until(() => c.closed(), 'the oversized message to be answered');
    expect(c.data()).toBe('{"verdict":"refused","reason":"message too large"}\n');
    expect(bad).toEqual(['message too large']);
  });

  it('removes the private dir it made when the shared one is not safe', async () => {
    const before = process.env.TMPDIR;
    const tmp = mkdtempSync(join(tmpdir(), 'lanes-tmp-'));
    process.env.TMPDIR = tmp;
    try {
      mkdirSync(join(tmp, `lanes-hooks-${process.getuid!()}`), { mode: 0o755 }); // open to others: not used
      const ch = channel([]);
      const path = await ch.open(`fb-${process.pid}`);
      expect(dirname(path)).not.toBe(join(tmp, `lanes-hooks-${process.getuid!()}`));
      expect(existsSync(dirname(path))).toBe(true);
      await ch.close();
      expect(existsSync(dirname(path))).toBe(false);
      expect(readdirSync(tmp)).toEqual([`lanes-hooks-${process.getuid!()}`]);
    } finally {
      if (before === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = before;
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
