import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MachineHost } from '../../../src/hosts/machine/machine-host.js';
import { isSameProcessAlive } from '../../../src/process/process-info.js';
import { until } from '../../helpers/until.js';
import {
  endedAfterEach,
  attachPidsOf,
  killSessionsOf,
  localMachine,
  remoteLaunch,
  testBatch,
  tmuxSessionsOf,
} from './local-machine.js';
import type { LocalMachine } from './local-machine.js';

// A remote lane's pane in the TUI: a local pty attached to its tmux session on the machine
// (here: `tmux -L lanes attach` run directly, as the machine's shell would run it over ssh).

const { hosts, batches } = endedAfterEach<MachineHost>();

const poll = { timeoutMs: 15_000, everyMs: 20 };

function tuiHost(machine: LocalMachine, batch: string): MachineHost {
  const host = new MachineHost(machine, {
    batchId: batch,
    tuiDrawn: true,
    pollMs: 50,
    size: { cols: 80, rows: 24 },
  });
  hosts.push(host);
  return host;
}

/** The pids of the tmux clients attached to session `name`. */
function clientsOf(name: string): number[] {
  const ls = spawnSync('tmux', ['-L', 'lanes', 'list-clients', '-t', `=${name}:`, '-F', '#{client_pid}'], {
    encoding: 'utf8',
  });
  return ls.stdout.split('\n').filter(Boolean).map(Number);
}

describe('the machine host in the TUI', () => {
  it("draws the session's output in the pane, types into it, and attaches again when the attach drops", async () => {
    const machine = localMachine();
    const batch = testBatch();
    batches.push(batch);
    const host = tuiHost(machine, batch);
    expect(host.capabilities).toEqual({
      inAppPane: true,
      outlivesLanes: true,
      attachable: true,
      agents: 'interactive',
    });
    const script = 'echo "hello from the machine"; read a; echo "got $a"; read b; echo "then $b"; exit 0';
    const spec = remoteLaunch(machine, batch, 'p', ['sh', '-c', script]);
    const session = await host.open(spec);
    const screen = session.screen!;
    const shows = (text: string) => screen.lines().some((line) => line.includes(text));
    await until(() => shows('hello from the machine'), 'the output in the pane', {
      ...poll,
      detail: () => screen.lines().join('\n'),
    });
    session.write('first\r');
    await until(() => shows('got first'), 'what was typed, answered', poll);

    // The connection drops (its attach is killed): the pane attaches again, the session ran on.
    const [firstAttach] = attachPidsOf(machine);
    process.kill(firstAttach!, 'SIGKILL');
    await until(() => attachPidsOf(machine).length === 2, 'a second attach', poll);
    expect(session.running).toBe(true);
    // (typed before tmux has the new client attached would be lost: wait until it has)
    const second = attachPidsOf(machine)[1]!;
    await until(() => clientsOf(session.paneId!).includes(second), 'the second attach attached', poll);
    await until(() => shows('got first'), 'the session drawn again', poll);
    session.write('second\r');
    // (read in the transcript: the session ends on it, and tmux clears the pane as it ends)
    const transcript = () => readFileSync(spec.logPath, 'utf8');
    await until(() => transcript().includes('then second'), 'typing through the new attach', poll);
    expect(await session.exited).toEqual({ code: 0, signal: null });
    // The pane shows how the executor left it (not tmux's "[exited]" on an empty screen).
    expect(screen.lines().filter((line) => line.trim() !== '')).toEqual([
      'hello from the machine',
      'first',
      'got first',
      'second',
      'then second',
    ]);
    for (const pid of attachPidsOf(machine)) expect(isSameProcessAlive(pid, null)).toBe(false);
  });

  it("shows no tmux status line: the executor has the pane's every row", async () => {
    const machine = localMachine();
    const batch = testBatch();
    batches.push(batch);
    const host = tuiHost(machine, batch);
    const never = `${machine.root}/never`;
    const script = 'echo "rows $(tput lines)"; while [ ! -e "$1" ]; do sleep 0.05; done';
    const session = await host.open(remoteLaunch(machine, batch, 's', ['sh', '-c', script, 'sh', never]));
    const screen = session.screen!;
    await until(() => screen.lines().some((l) => l.includes('rows')), 'the output in the pane', poll);
    // (tmux draws its status line on the client: it waits for a frame after the attach)
    await until(() => clientsOf(session.paneId!).length === 1, 'the attach attached', poll);
    const height = () =>
      spawnSync('tmux', ['-L', 'lanes', 'display', '-p', '-t', `=${session.paneId!}:`, '#{pane_height}'], {
        encoding: 'utf8',
      }).stdout.trim();
    await until(() => height() !== '50', 'the window sized to the attach', poll);
    expect(height()).toBe('24');
    // A resize of the pane resizes the session there (its attach pty is told, tmux follows it).
    session.resize(100, 30);
    await until(() => height() === '30', 'the session resized with its pane', {
      ...poll,
      detail: () => height(),
    });
    const status = (lines: string[]) => lines.filter((l) => /\[lanes-|^\[\d+\] /.test(l));
    expect(status(screen.lines()), screen.lines().join('\n')).toEqual([]);
    expect(status(session.recentLines(24))).toEqual([]);
    session.kill();
    await session.exited;
  });

  it('ends its attaches when it is disposed and leaves the session running there', async () => {
    const machine = localMachine();
    const batch = testBatch();
    batches.push(batch);
    const host = tuiHost(machine, batch);
    const session = await host.open(remoteLaunch(machine, batch, 'd', ['sh', '-c', 'echo up; read x']));
    await until(() => session.screen!.lines().some((l) => l.includes('up')), 'the pane', poll);
    await host.dispose();
    for (const pid of attachPidsOf(machine)) expect(isSameProcessAlive(pid, null)).toBe(false);
    expect(tmuxSessionsOf(batch)).toEqual([`lanes-${batch}-d-run-d-1`]);
    killSessionsOf(batch); // (the test's own cleanup: lanes never ends it on dispose)
  });
});
