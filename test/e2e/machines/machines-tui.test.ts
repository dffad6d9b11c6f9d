import { rmSync, writeFileSync } from 'node:fs';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, tempDir } from '../../helpers/repo.js';
import { Tmux } from '../../helpers/tmux.js';
import { until } from '../../helpers/until.js';
import type { SshMachines } from '../../helpers/sshd.js';
import { readRecord, writePlan } from '../reliability/support.js';
import { machineRepo, machinesForFile } from './support.js';

// The real TUI (in a tmux of the test's own, 80×24) running a batch whose lanes are all on
// the two fixture machines: the lane list names each lane's machine, the selected lane's
// pane is an attach to its tmux session there (it shows what the executor printed there),
// a resize of the TUI resizes the sessions there, and the batch completes.
// Run `npm run -s build` first.

const CHILDREN = ['t1', 't2', 't3'];

let term: Tmux | null = null;
afterEach(async () => {
  await term?.kill();
  term = null;
});

/** Each tmux session of lanes on the machines, with its window's size (`name WxH`). */
async function remoteSizes(fixture: SshMachines): Promise<Map<string, string>> {
  const sizes = new Map<string, string>();
  for (const m of fixture.machines) {
    const ls = await execa(
      'tmux',
      ['-L', 'lanes', 'list-sessions', '-F', '#{session_name} #{window_width}x#{window_height}'],
      { reject: false, env: { TMUX_TMPDIR: '/tmp' }, uid: m.uid },
    );
    if (ls.exitCode !== 0) continue;
    for (const line of String(ls.stdout).split('\n').filter(Boolean)) {
      const [name = '', size = ''] = line.split(' ');
      sizes.set(name, size);
    }
  }
  return sizes;
}

describe('the TUI of a batch on machines', () => {
  const machines = machinesForFile();

  it("shows each lane's machine and its executor's output, follows a resize there, and completes", async () => {
    const repo = await machineRepo(machines.fixture, { slots: 2 });
    // (a file every machine's user can see; the coordinator's temp folders are not theirs)
    const go = `/tmp/lanes-tui-go-${process.pid}-${Date.now()}`;
    const plan = writePlan({
      batch: 'tui',
      executor: 'script',
      max_parallel: 3,
      children: CHILDREN.map((id) => ({
        id,
        goal: `say where ${id} runs, wait, write who ran it`,
        scope: [`who/${id}.txt`],
        acceptance: [{ id: 'written', run: ['test', '-s', `who/${id}.txt`] }],
        run: `echo "hello from $(id -un) in ${id}"; while [ ! -e ${go} ]; do sleep 0.1; done; mkdir -p who && id -un > who/${id}.txt`,
      })),
    });
    term = new Tmux();
    await term.start([process.execPath, CLI, '-C', repo, 'start', plan], {
      cwd: tempDir('lanes-cwd-'),
      cols: 80,
      rows: 24,
    });
    try {
      await term.waitFor(/Start this batch\?[\s\S]*y start/, 60_000);
      await term.keys('y');
      const users = machines.fixture.machines.map((m) => m.user).join('|');
      let screen = await term.waitFor(new RegExp(`│hello from (${users}) in t1`), 90_000);
      // Every lane on a machine, and the list says which. (t1's output can come before the
      // last lane is enrolled: the screen is read again until the list has caught up with
      // the record, read after it.)
      const machineOf = (child: object) => (child as { machine?: string }).machine;
      let record = readRecord(repo, 'tui')!;
      await until(
        async () => {
          screen = await term!.capture();
          record = readRecord(repo, 'tui')!;
          return record.children.every(
            (c) => machineOf(c) !== undefined && new RegExp(`${c.task_id} .*@${machineOf(c)}`).test(screen),
          );
        },
        "every lane's machine in the list",
        { timeoutMs: 60_000, everyMs: 150, detail: () => `${JSON.stringify(record.children)}\n${screen}` },
      );
      for (const child of record.children) expect(machineOf(child)).toMatch(/^m[12]$/);
      const t1 = record.children.find((c) => c.task_id === 't1') as { machine?: string };
      const user = machines.fixture.machines.find((m) => m.name === t1.machine)!.user;
      expect(screen).toContain(`hello from ${user} in t1`);
      expect(screen.split('\n').length).toBeLessThanOrEqual(24);

      // A resize of the TUI resizes the sessions there (their attach ptys follow the panes).
      let before = new Map<string, string>();
      await until(
        async () => {
          before = await remoteSizes(machines.fixture);
          // (200x50: as the side made it; 120x32: the host's size before the TUI told it its pane's)
          return (
            before.size === CHILDREN.length &&
            [...before.values()].every((s) => !['200x50', '120x32'].includes(s))
          );
        },
        'every session there sized to its pane',
        { timeoutMs: 30_000, everyMs: 100, detail: () => JSON.stringify([...before]) },
      );
      const width = (size: string) => Number(size.split('x')[0]);
      const widest = Math.max(...[...before.values()].map(width));
      await term.run('resize-window', '-t', 'main', '-x', '160', '-y', '48');
      await until(
        async () => [...(await remoteSizes(machines.fixture)).values()].every((s) => width(s) > widest),
        'the sessions there resized',
        { timeoutMs: 30_000, everyMs: 100, detail: () => JSON.stringify([...before]) },
      );

      writeFileSync(go, '');
      screen = await term.waitFor(/^lanes · tui .*completed/m, 120_000);
      const done = readRecord(repo, 'tui')!;
      expect(done.batch_state).toBe('completed');
      for (const c of done.children) expect(['integrated', 'released'], c.task_id).toContain(c.state);
      await term.keys('q');
      const asked = await term.waitFor(/Quit\?|^EXIT=\d+$/m, 30_000);
      if (/Quit\?/.test(asked)) await term.keys('y');
      await term.waitFor(/^EXIT=0$/m, 60_000);
    } finally {
      rmSync(go, { force: true });
    }
  }, 300_000);
});
