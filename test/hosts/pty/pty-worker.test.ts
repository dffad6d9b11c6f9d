import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { LaunchSpec } from '../../../src/hosts/host.js';
import { PtyHost, type PtySession } from '../../../src/hosts/pty/pty-host.js';
import { until } from '../../helpers/until.js';
import { ptyHostIn, ptyLaunch } from '../pty-launch.js';

// The pty host's panes read and parsed off lanes' main thread (src/hosts/pty/pty-worker.ts),
// seen from the user's side: a real executor in a real pty, while the main thread is busy
// (as a TUI drawing a costly frame keeps it), is not held up by it, loses none of its
// output at its exit, and its screen shows what it printed. The main thread is kept busy
// by a loop that spins, on purpose: that is the load, not a wait for anything.

const hosts: PtyHost[] = [];
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.dispose()));
});

const launch = (argv: readonly string[]): LaunchSpec => ptyLaunch('pty-worker', argv);
const ptyHost = (): PtyHost => ptyHostIn(hosts);

/** Keeps this thread busy for `ms` (a frame that costs that much). */
function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

/** Blocks the main thread once, for `ms`, as soon as the session's output contains `mark`. */
function blockAt(session: PtySession, mark: string, ms: number): { freed: () => number } {
  let seen = '';
  let at = 0;
  let freed = 0;
  const off = session.onOutput((chunk) => {
    seen += chunk;
    const marked = seen.includes(mark);
    seen = seen.slice(-mark.length);
    if (at || !marked) return;
    at = Date.now();
    off();
    busy(ms);
    freed = Date.now();
  });
  return { freed: () => freed };
}

const LAST = 'THE-EXECUTORS-LAST-LINE';

describe('PtyHost panes read off the main thread', () => {
  it('keeps the executor writing while the main thread is busy, and shows its output', async () => {
    // 2 MB after the mark: far more than a pty holds, so an executor whose pty is read by a
    // busy thread waits for it. It records when it finished writing.
    const spec = launch([
      'sh',
      '-c',
      `echo MARK; seq 1 300000; date +%s%3N > done-at; echo ${LAST}; sleep 5`,
    ]);
    const session = await ptyHost().open(spec);
    const block = blockAt(session, 'MARK', 3000);
    const doneAt = join(spec.cwd, 'done-at');
    await until(
      () => existsSync(doneAt) && readFileSync(doneAt, 'utf8').endsWith('\n'),
      'the executor done',
      {
        timeoutMs: 10_000,
      },
    );
    const finished = Number(readFileSync(doneAt, 'utf8'));
    // Finished writing while the main thread was still busy.
    expect(block.freed()).toBeGreaterThan(0);
    expect(finished).toBeLessThan(block.freed());
    await until(
      async () => {
        await session.screen.flushed();
        return session.screen.lines().includes(LAST);
      },
      'the last line on the screen',
      { timeoutMs: 8000, everyMs: 10, detail: () => session.screen.lines().join('\n') },
    );
    const styled = session.screen.styledLines();
    expect(styled.some((runs) => runs.map((r) => r.text).join('') === LAST)).toBe(true);
    expect(session.recentLines(2)).toEqual(['300000', LAST]);
    session.kill();
    await session.exited;
    const logged = readFileSync(spec.logPath, 'utf8').split('\r\n');
    expect(logged.filter((l) => /^\d+$/.test(l)).length).toBe(300_000);
  });

  it("keeps an executor's last output when it exits while the main thread is busy", async () => {
    // 10 KB printed at once (it fits in the pty, so the executor need not wait for a
    // reader), then the executor exits while the main thread is busy (its wrapper lingers
    // 50 ms): the kernel keeps only a few KB of a pty nobody reads after that.
    const spec = launch(['sh', '-c', `echo MARK; sleep 0.2; seq 1 2000; echo ${LAST}`]);
    const session = await ptyHost().open(spec);
    blockAt(session, 'MARK', 1500);
    expect(await session.exited).toEqual({ code: 0, signal: null });
    const logged = readFileSync(spec.logPath, 'utf8').split('\r\n');
    expect(logged.at(-2)).toBe(LAST);
    expect(logged.filter((l) => /^\d+$/.test(l)).length).toBe(2000);
    // `exited` comes when the screen has parsed the end: its last lines are the executor's.
    expect(session.recentLines(2)).toEqual(['2000', LAST]);
    expect(session.screen.lines()).toContain(LAST);
    expect(session.screen.styledLines().some((runs) => runs.some((r) => r.text === LAST))).toBe(true);
  });
});
