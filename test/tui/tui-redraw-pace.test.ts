import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { batchPorts } from '../../src/cli/batch-run/batch-ports.js';
import { TuiStore } from '../../src/tui/tui-store.js';
import { startBatch } from '../helpers/batch.js';
import { makeRepo } from '../helpers/repo.js';
import { FakeSession } from '../helpers/tui.js';
import { until } from '../helpers/until.js';
import type { PtyHost } from '../../src/hosts/pty/pty-host.js';
import { ptyHostIn, ptyLaunch } from '../hosts/pty-launch.js';

const hosts: PtyHost[] = [];
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.dispose()));
});

// A frame of a busy pane costs tens of milliseconds on the thread that reads the ptys; at a
// fixed 20 Hz those frames took most of it while a lane streamed (issue 28). The store
// waits longer after a costly frame: here every frame costs 40 ms, and the redraws of a
// pane streaming output come at least 150 ms apart (src/tui/redraw-pace.ts: 6x the cost).

const PLAN = `
batch: pace
max_parallel: 1
children:
  - { id: A, goal: Write a, scope: ["a/**"], acceptance: [{ id: ok, run: "true" }] }
`;

const busy = (ms: number) => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};

describe('redraws while a pane streams', () => {
  it('come further apart when frames are costly', async () => {
    const d = await startBatch(await makeRepo(), PLAN);
    await d.provisionAll(await d.tick());
    const store = new TuiStore(batchPorts(d.repo, 'pace').store, d.plan);
    const a = new FakeSession('A');
    const frames: number[] = [];
    store.subscribe(() => {
      frames.push(performance.now());
      busy(40);
    });
    store.onEvent({ kind: 'launched', task: 'A', attempt: 1, session: a });
    store.setVisible(['A']);
    const until = performance.now() + 1500;
    while (performance.now() < until) {
      a.emit('output\r\n');
      await new Promise((r) => setTimeout(r, 5));
    }
    store.dispose();
    const gaps = frames.slice(2).map((t, i) => t - frames[i + 1]!);
    expect(gaps.length).toBeGreaterThan(2);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(150);
  });

  // The last lines of a stream waited out the whole pace (6x a costly frame, 240 ms here)
  // after the output had ended: the end of a 20 MB cat reached the screen 120-290 ms late.
  it('do not wait out the pace once the output has gone quiet', async () => {
    const d = await startBatch(await makeRepo(), PLAN);
    await d.provisionAll(await d.tick());
    const store = new TuiStore(batchPorts(d.repo, 'pace').store, d.plan);
    const a = new FakeSession('A');
    const frames: { at: number; ended: number; shows: boolean }[] = [];
    store.subscribe(() => {
      const at = performance.now();
      busy(40);
      const shows =
        store.sessions
          .get('A')
          ?.screen?.lines()
          .some((l) => l.includes('THE-END')) ?? false;
      frames.push({ at, ended: performance.now(), shows });
    });
    store.onEvent({ kind: 'launched', task: 'A', attempt: 1, session: a });
    store.setVisible(['A']);
    // A stream, ended just after a frame, so the pace's whole wait would lie ahead of its end.
    while (frames.length < 4) {
      await a.print('output\r\n');
      await new Promise((r) => setTimeout(r, 5));
    }
    await a.print('THE-END\r\n');
    const last = frames.at(-1)!.ended;
    await until(() => frames.some((f) => f.shows), 'a frame that shows the end');
    store.dispose();
    const shown = frames.find((f) => f.shows)!;
    // 15 ms of quiet, then 2x the frame's 40 ms from its end at the soonest: well under 240.
    expect(shown.at - last).toBeLessThan(150);
  });

  it('do not wait out the pace for the last line of a real pty, parsed in the pty worker', async () => {
    const d = await startBatch(await makeRepo(), PLAN);
    await d.provisionAll(await d.tick());
    const store = new TuiStore(batchPorts(d.repo, 'pace').store, d.plan);
    const spec = ptyLaunch('redraw-pace', [
      'sh',
      '-c',
      'seq 1 100000; while [ ! -e go ]; do sleep 0.01; done; echo THE-END; sleep 5',
    ]);
    const session = await ptyHostIn(hosts).open(spec);
    let go = 0;
    let shownAt = 0;
    store.subscribe(() => {
      // As the pane's frame does: read the rows drawn (asks the worker for the next snapshot).
      session.screen!.styledLines();
      if (!shownAt && session.screen!.lines().some((l) => l.includes('THE-END'))) shownAt = performance.now();
      busy(40);
      // Once the flood is drawn, the last line is printed just after a frame.
      if (!go && session.screen!.lines().some((l) => l.includes('100000'))) {
        writeFileSync(join(spec.cwd, 'go'), '');
        go = performance.now();
      }
    });
    store.onEvent({ kind: 'launched', task: 'A', attempt: 1, session });
    store.setVisible(['A']);
    await until(() => shownAt, 'a frame that shows THE-END');
    store.dispose();
    // The shell sees go within ~10 ms; then 15 ms of quiet and 2x the 40 ms frame at the
    // soonest, where the pace alone waits 240 ms.
    expect(shownAt - go).toBeLessThan(170);
  });
});
