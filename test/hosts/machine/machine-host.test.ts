import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LanesError } from '../../../src/core/basics/errors.js';
import { readExitStatus } from '../../../src/hosts/exit-status.js';
import type { LaneSession } from '../../../src/hosts/host.js';
import { MachineHost } from '../../../src/hosts/machine/machine-host.js';
import { until } from '../../helpers/until.js';
import { endedAfterEach, localMachine, remoteLaunch, testBatch, tmuxSessionsOf } from './local-machine.js';
import type { LocalMachine } from './local-machine.js';

// The machine host against the real side script (dist/lanes/machine.js) on this machine,
// without ssh: real tmux sessions on the side's socket, real files under the machine's
// root, a real attach pty in the TUI. Every wait polls the real state until it holds.

const { hosts, batches } = endedAfterEach<MachineHost>();

const poll = { timeoutMs: 15_000, everyMs: 20 };

function makeHost(machine: LocalMachine, batch: string, tuiDrawn = false): MachineHost {
  const host = new MachineHost(machine, {
    batchId: batch,
    tuiDrawn,
    pollMs: 50,
    size: { cols: 80, rows: 24 },
  });
  hosts.push(host);
  return host;
}

function newBatch(): string {
  const batch = testBatch();
  batches.push(batch);
  return batch;
}

const sh = (script: string, ...args: string[]): string[] => ['sh', '-c', script, 'sh', ...args];

/** A script that waits until the file `$1` exists (the test creates it), then goes on. */
const waitFor = 'while [ ! -e "$1" ]; do sleep 0.02; done';

describe('the machine host', () => {
  it('runs a script executor in a tmux session there and brings its output and exit back here', async () => {
    const machine = localMachine();
    const batch = newBatch();
    const host = makeHost(machine, batch);
    const spec = remoteLaunch(machine, batch, 'c1', []);
    const prompt = spec.env.LANES_PROMPT_FILE!;
    const launch = { ...spec, argv: sh('cat "$1"; echo one; echo "two $LANES_TASK"; exit 3', prompt) };
    const session = await host.open(launch);
    expect(session.paneId).toBe(`lanes-${batch}-c1-run-c1-1`);
    expect(session.pid).toBeNull();
    expect(await session.exited).toEqual({ code: 3, signal: null });
    expect(session.running).toBe(false);
    // The coordinator reads both here, where it keeps them for a local lane.
    expect(readExitStatus(launch.statusPath)).toEqual({ code: 3, signal: null });
    expect(readFileSync(launch.logPath, 'utf8')).toBe('the prompt of c1\none\ntwo c1\n');
    expect(session.recentLines(2)).toEqual(['one', 'two c1']);
    // The prompt went to the machine's run folder, and the executor was handed that copy.
    const runDir = join(machine.root, 'runs', batch, 'c1', 'run-c1');
    expect(readFileSync(join(runDir, 'prompt-1.md'), 'utf8')).toBe('the prompt of c1\n');
    expect(existsSync(join(runDir, 'attempt-1.status'))).toBe(true);
  });

  it("brings a headless agent's JSON lines back as they come: rendered in the transcript, raw to onOutput", async () => {
    const machine = localMachine();
    const batch = newBatch();
    const host = makeHost(machine, batch);
    const go = join(machine.root, 'go');
    const script = `echo '{"n":1}'; ${waitFor}; echo '{"n":2}'`;
    const spec = remoteLaunch(machine, batch, 'agent', sh(script, go));
    const rendered = { ...spec, renderLine: (line: string) => [`rendered ${JSON.parse(line).n}`] };
    const session = await host.open(rendered);
    let seen = '';
    session.onOutput((chunk) => (seen += chunk));
    // While it runs: the first line is here already (the lane watch and the usage reader see it).
    await until(() => seen.includes('{"n":1}\n'), 'the first JSON line, while the agent runs', poll);
    await until(() => session.recentLines(1)[0] === 'rendered 1', 'the rendered first line', poll);
    expect(session.running).toBe(true);
    writeFileSync(go, '');
    expect(await session.exited).toEqual({ code: 0, signal: null });
    expect(seen).toBe('{"n":1}\n{"n":2}\n');
    expect(readFileSync(spec.logPath, 'utf8')).toBe('rendered 1\nrendered 2\n');
  });

  it('asks the machine once a poll for all its sessions, and reads a quiet transcript less and less often', async () => {
    const machine = localMachine();
    const batch = newBatch();
    const host = makeHost(machine, batch);
    const [go, more] = [join(machine.root, 'go'), join(machine.root, 'more')];
    const quiet = sh(waitFor, more);
    const loud = sh(`${waitFor}; echo awake; while [ ! -e "$2" ]; do sleep 0.02; done`, go, more);
    const sessions: LaneSession[] = [];
    for (const [child, argv] of [
      ['a', loud],
      ['b', quiet],
      ['c', quiet],
    ] as const)
      sessions.push(await host.open(remoteLaunch(machine, batch, child, argv)));
    const from = machine.calls.length;
    const since = (op: string) => machine.calls.slice(from).filter((c) => c.op === op);
    // (a poll is a few processes: on a loaded machine, a second or more)
    await until(() => since('session.list').length >= 12, 'twelve polls', { ...poll, timeoutMs: 60_000 });
    // One list a poll, of the batch's sessions on this machine: never one a lane.
    expect(new Set(since('session.list').map((c) => c.args.prefix))).toEqual(new Set([`lanes-${batch}-`]));
    const readsOfA = () =>
      since('file.read').filter((c) => String(c.args.path).endsWith('/a/run-a/attempt-1.log'));
    expect(readsOfA().length).toBeGreaterThan(0);
    expect(readsOfA().length).toBeLessThan(since('session.list').length / 2);
    // Once it prints, what it printed comes (within the longest wait between two reads).
    writeFileSync(go, '');
    await until(() => sessions[0]!.recentLines(1)[0] === 'awake', 'the quiet lane awake', poll);
    writeFileSync(more, '');
    for (const s of sessions) expect(await s.exited).toEqual({ code: 0, signal: null });
  }, 90_000);

  it('hands the executor every plan string in its argv and environment byte for byte', async () => {
    const machine = localMachine();
    const batch = newBatch();
    const host = makeHost(machine, batch);
    const canary = join(machine.root, 'CANARY');
    const hostile = (n: number) =>
      `$(touch ${canary}-${n}a) \`touch ${canary}-${n}b\`; touch ${canary}-${n}c && '"\\ \n*?~ $HOME ${n}`;
    const out = join(machine.root, 'out');
    const script = 'printf "%s\\0" "$@" > "$0.args"; printf "%s" "$LANES_PLAN" > "$0.env"';
    const spec = remoteLaunch(machine, batch, 'inj', ['sh', '-c', script, out, hostile(1), hostile(2)], {
      LANES_PLAN: hostile(3),
    });
    const session = await host.open(spec);
    expect(await session.exited).toEqual({ code: 0, signal: null });
    expect(readFileSync(`${out}.args`, 'utf8')).toBe(`${hostile(1)}\0${hostile(2)}\0`);
    expect(readFileSync(`${out}.env`, 'utf8')).toBe(hostile(3));
    for (const n of [1, 2, 3]) for (const k of 'abc') expect(existsSync(`${canary}-${n}${k}`)).toBe(false);
  });

  it('kill ends the session on the machine', async () => {
    const machine = localMachine();
    const batch = newBatch();
    const host = makeHost(machine, batch);
    const never = join(machine.root, 'never');
    const session = await host.open(remoteLaunch(machine, batch, 'k', sh(`echo up; ${waitFor}`, never)));
    await until(() => session.recentLines(1)[0] === 'up', 'the executor running', poll);
    expect(tmuxSessionsOf(batch)).toEqual([`lanes-${batch}-k-run-k-1`]);
    session.kill('SIGTERM');
    // (the side signals the pane's group: the exit wrapper goes too, and leaves no status)
    expect(await session.exited).toEqual({ code: null, signal: 'SIGTERM' });
    expect(tmuxSessionsOf(batch)).toEqual([]);
  });

  it('closeLane ends what is left of that lane and nothing of another', async () => {
    const machine = localMachine();
    const batch = newBatch();
    const host = makeHost(machine, batch);
    const never = join(machine.root, 'never');
    const go = join(machine.root, 'go');
    const mine = await host.open(remoteLaunch(machine, batch, 'x', sh(waitFor, never)));
    // (child `x-2`'s sessions start with `lanes-<batch>-x-` too: they are not x's)
    const other = await host.open(remoteLaunch(machine, batch, 'x-2', sh(waitFor, go)));
    await host.closeLane('x', mine.paneId!);
    await mine.exited;
    expect(tmuxSessionsOf(batch)).toEqual([`lanes-${batch}-x-2-run-x-2-1`]);
    expect(other.running).toBe(true);
    writeFileSync(go, '');
    expect(await other.exited).toEqual({ code: 0, signal: null });
  });

  it('a child run again on the same machine (a lane re-made, a move back) gets a session and an exit of its own', async () => {
    const machine = localMachine();
    const batch = newBatch();
    const host = makeHost(machine, batch);
    const first = {
      ...remoteLaunch(machine, batch, 'again', sh('echo first; exit 3')),
      runId: 'run-one-aaaaaa',
    };
    const one = await host.open(first);
    expect(await one.exited).toEqual({ code: 3, signal: null });
    // The same child, attempt 1 again, in a run of its own (its log folder here is new too).
    const spec = remoteLaunch(machine, batch, 'again', sh('echo second; exit 0'));
    const second = { ...spec, runId: 'run-two-bbbbbb' };
    const two = await host.open(second);
    expect(two.paneId).not.toBe(one.paneId);
    expect(await two.exited).toEqual({ code: 0, signal: null });
    expect(readExitStatus(second.statusPath)).toEqual({ code: 0, signal: null });
    expect(readFileSync(second.logPath, 'utf8')).toBe('second\n');
  });

  it('keeps a session as it was while the machine does not answer, and sees its exit once it does', async () => {
    const machine = localMachine();
    const batch = newBatch();
    let down = false;
    let refused = 0;
    const flaky: LocalMachine = {
      ...machine,
      call<T>(op: string, args: unknown): Promise<T> {
        if (!down) return machine.call<T>(op, args);
        refused += 1;
        return Promise.reject(new LanesError('machine_unreachable', `${machine.name} does not answer`));
      },
    };
    const host = makeHost(flaky, batch);
    const go = join(machine.root, 'go');
    const spec = remoteLaunch(machine, batch, 'u', sh(`echo up; ${waitFor}; exit 7`, go));
    const session = await host.open(spec);
    await until(() => session.recentLines(1)[0] === 'up', 'the executor running', poll);
    down = true;
    writeFileSync(go, '');
    await until(() => tmuxSessionsOf(batch).length === 0, 'the session ended on the machine', poll);
    await until(() => refused >= 5, 'polls the machine did not answer', poll);
    expect(session.running).toBe(true); // (nothing known: nothing decided)
    expect(readExitStatus(spec.statusPath)).toBeNull();
    down = false;
    expect(await session.exited).toEqual({ code: 7, signal: null });
  });

  it('a host made again after lanes was gone finds a running session by its name and sees its exit', async () => {
    const machine = localMachine();
    const batch = newBatch();
    const go = join(machine.root, 'go');
    const spec = remoteLaunch(machine, batch, 'r', sh(`echo before; ${waitFor}; echo after; exit 5`, go));
    const first = makeHost(machine, batch);
    const session = await first.open(spec);
    await until(() => session.recentLines(1)[0] === 'before', 'the first line', poll);
    await first.dispose(); // (the coordinator is gone: the session goes on)
    expect(tmuxSessionsOf(batch)).toEqual([`lanes-${batch}-r-run-r-1`]);

    const again = makeHost(machine, batch);
    const reattachSpec = { ...spec, argv: [], env: {} }; // (what resume knows: executor-recovery.ts)
    expect(await again.reattach(reattachSpec, `lanes-${batch}-r-run-r-99`)).toBeNull();
    const found = await again.reattach(reattachSpec, session.paneId!);
    expect(found?.running).toBe(true);
    writeFileSync(go, '');
    expect(await found!.exited).toEqual({ code: 5, signal: null });
    expect(readExitStatus(spec.statusPath)).toEqual({ code: 5, signal: null });
    expect(readFileSync(spec.logPath, 'utf8')).toBe('before\nafter\n');
  });

  it('a session that ended while lanes was gone is found again and its exit brought back', async () => {
    const machine = localMachine();
    const batch = newBatch();
    const go = join(machine.root, 'go');
    const spec = remoteLaunch(machine, batch, 'e', sh(`echo before; ${waitFor}; echo after; exit 4`, go));
    const first = makeHost(machine, batch);
    const session = await first.open(spec);
    await until(() => session.recentLines(1)[0] === 'before', 'the first line', poll);
    await first.dispose();
    writeFileSync(go, '');
    await until(() => tmuxSessionsOf(batch).length === 0, 'the session ended on the machine', poll);
    expect(readExitStatus(spec.statusPath)).toBeNull(); // (nobody brought it back yet)

    const again = makeHost(machine, batch);
    const found = await again.reattach({ ...spec, argv: [], env: {} }, session.paneId!);
    expect(found).not.toBeNull();
    expect(await found!.exited).toEqual({ code: 4, signal: null });
    expect(readExitStatus(spec.statusPath)).toEqual({ code: 4, signal: null });
    expect(readFileSync(spec.logPath, 'utf8')).toBe('before\nafter\n');
  });
});
