import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { Server } from 'node:net';
import { extname, join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, tempDir } from '../../helpers/repo.js';
import { SIDE } from './side.js';

// `node machine.js hook <kind>` on a machine is exactly `lanes hook <kind>`: the same
// message to the coordinator's socket, the same output for its verdict, the same refusals
// of bad input. Both run here against one socket that plays the coordinator.

const dir = tempDir('lanes-side-hook-');
const socketPath = join(dir, 'hook.sock');
const received: string[] = [];
let reply = JSON.stringify({ verdict: 'continue', feedback: 'check `tests` failed: 1 != 2' });
const server: Server = createServer((socket) => {
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    text += chunk;
    if (!text.includes('\n')) return;
    received.push(text.split('\n')[0] as string);
    socket.end(`${reply}\n`);
  });
});
await new Promise<void>((resolve) => server.listen(socketPath, resolve));
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

// (a run id of this file's own: a lanes executor's exit elsewhere in the suite stops every
// process whose environment holds its LANES_RUN, so a shared id like run-1 gets killed)
const RUN = `run-side-hook-${process.pid}`;
const env = {
  LANES_HOOK_SOCKET: socketPath,
  LANES_HOOK_TOKEN: 'a-token-of-sixteen-or-more',
  LANES_TASK: 'a',
  LANES_RUN: RUN,
  LANES_ATTEMPT: '2',
};
const STOP_INPUT = JSON.stringify({
  session_id: 's-a',
  hook_event_name: 'Stop',
  last_assistant_message: 'Done.',
});

async function both(kind: string, input: string, withEnv: Record<string, string> = env) {
  const run = (argv: string[]) =>
    execa(process.execPath, argv, { input, env: withEnv, extendEnv: false, cwd: dir, reject: false });
  const [lanes, side] = [await run([CLI, 'hook', kind]), await run([SIDE, 'hook', kind])];
  const shape = (r: typeof lanes) => ({
    exitCode: r.exitCode,
    stdout: String(r.stdout),
    stderr: String(r.stderr),
  });
  return { lanes: shape(lanes), side: shape(side) };
}

describe('node machine.js hook <kind>', () => {
  it('sends the same message as lanes hook and prints the same for the verdict', async () => {
    received.length = 0;
    const { lanes, side } = await both('claude-stop', STOP_INPUT);
    expect(side).toEqual(lanes);
    expect(side.exitCode).toBe(0);
    expect(JSON.parse(side.stdout)).toEqual({ decision: 'block', reason: 'check `tests` failed: 1 != 2' });
    expect(received).toHaveLength(2);
    expect(received[1]).toBe(received[0]);
    expect(JSON.parse(received[1] as string)).toMatchObject({
      v: 1,
      kind: 'turn-end',
      task: 'a',
      run_id: RUN,
      attempt: 2,
      token: env.LANES_HOOK_TOKEN,
      session_id: 's-a',
      last_message: 'Done.',
    });
    reply = JSON.stringify({ verdict: 'refused', reason: 'not this lane' });
    const refused = await both('claude-stop', STOP_INPUT);
    expect(refused.side).toEqual(refused.lanes);
    expect(refused.side.stderr).toContain('refused: not this lane');
  });

  it('refuses what lanes hook refuses: no lanes environment, an unknown kind, the bad hook inputs', async () => {
    const bare = await both('claude-stop', STOP_INPUT, {});
    expect(bare.side).toEqual(bare.lanes);
    expect(bare.side.exitCode).toBe(2);
    const unknown = await both('gemini-stop', STOP_INPUT);
    expect(unknown.side).toEqual(unknown.lanes);
    expect(unknown.side.stderr).toContain('usage: lanes hook');
    const corpus = join(import.meta.dirname, '..', '..', 'corpus', 'hook-inputs');
    for (const name of readdirSync(corpus).filter((n) => n.endsWith('.json'))) {
      const expected = readFileSync(
        join(corpus, `${name.slice(0, -extname(name).length)}.expect`),
        'utf8',
      ).trim();
      const r = await both('claude-stop', readFileSync(join(corpus, name), 'utf8'));
      expect(r.side).toEqual(r.lanes);
      expect(r.side.exitCode).toBe(2);
      expect(r.side.stderr).toContain(expected);
    }
  });
});
