import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCheck } from '../../src/qa/check-runner.js';
import { readExitStatus } from '../../src/hosts/exit-status.js';
import { HeadlessHost } from '../../src/hosts/headless-host.js';
import type { Host, LaneSession, LaunchSpec } from '../../src/hosts/host.js';
import { PtyHost, type PtySession } from '../../src/hosts/pty/pty-host.js';
import type { Screen } from '../../src/hosts/pty/screen.js';
import { tempDir } from '../helpers/repo.js';
import { until } from '../helpers/until.js';

// The hosts against real processes: node-pty panes with a headless xterm screen model,
// plain child processes, and acceptance checks. Nothing is mocked, and nothing waits a
// fixed time: every wait polls the real state (screen, transcript, /proc) until it holds.

const hosts: Host[] = [];
afterEach(async () => {
  await Promise.all(hosts.splice(0).map((h) => h.dispose()));
});

function ptyHost(size = { cols: 80, rows: 24 }, scrollback?: number): PtyHost {
  const host = new PtyHost(size, scrollback);
  hosts.push(host);
  return host;
}

function headlessHost(): HeadlessHost {
  const host = new HeadlessHost();
  hosts.push(host);
  return host;
}

let counter = 0;
function launch(argv: readonly string[], dir = tempDir('lanes-hosts-')): LaunchSpec {
  counter += 1;
  const logDir = join(dir, 'logs');
  return {
    taskId: `T${counter}`,
    runId: `run-hosts-${process.pid}`, // (its own: an exit sweeps every process holding its LANES_RUN)
    attempt: 1,
    cwd: dir,
    argv,
    env: { LANES_TEST: '1' },
    logPath: join(logDir, `attempt-${counter}.log`),
    statusPath: join(logDir, `attempt-${counter}.status`),
  };
}

const sh = (script: string): string[] => ['sh', '-c', script];

/** How the waits here poll: every 10 ms, for at most 8 s; `lastState` says what was seen. */
const poll = (lastState?: () => unknown) => ({
  timeoutMs: 8000,
  everyMs: 10,
  detail: () => `last state: ${JSON.stringify(lastState?.())}`,
});

/** Waits until the parsed screen satisfies `test`. */
async function untilScreen(
  session: PtySession,
  what: string,
  test: (screen: Screen) => boolean,
): Promise<void> {
  await until(
    async () => {
      await session.screen.flushed();
      return test(session.screen);
    },
    what,
    poll(() => session.screen.lines()),
  );
}

const screenHas = (text: string) => (screen: Screen) => screen.lines().some((l) => l.includes(text));

/** Waits until the session's recent output has a line matching `pattern`; returns the match. */
function untilLine(session: LaneSession, pattern: RegExp): Promise<RegExpMatchArray> {
  return until(
    () => {
      for (const line of session.recentLines(200)) {
        const m = line.match(pattern);
        if (m) return m;
      }
      return null;
    },
    `a line matching ${pattern}`,
    poll(() => session.recentLines(20)),
  );
}

/** True when `pid` no longer runs (gone, or a zombie nobody has reaped yet). */
function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return true;
    throw error;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

function processGroupOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // After "pid (comm) ": state ppid pgrp ...
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}

describe('PtyHost', () => {
  it('reflects colours and cursor movement in the screen model', async () => {
    const script = [
      "printf '\\033[31mRED\\033[0m plain\\n'",
      "printf 'abcdef\\rXY\\n'",
      "printf '\\033[5;10Hhere'",
      'sleep 0.2',
    ].join('; ');
    const session = await ptyHost().open(launch(sh(script)));
    expect(session.host).toBe('pty');
    expect(session.pid).toBeGreaterThan(0);
    await untilScreen(session, '"here" on the screen', screenHas('here'));

    const lines = session.screen.lines();
    expect(lines[0]).toBe('RED plain');
    expect(lines[1]).toBe('XYcdef');
    expect(lines[4]).toBe(`${' '.repeat(9)}here`);
    expect(lines[4]!.indexOf('here')).toBe(9);
    expect(session.screen.cursor()).toEqual({ x: 13, y: 4 });

    const styled = session.screen.styledLines();
    expect(styled[0]).toMatchObject([
      { text: 'RED', fg: 1, bg: null, bold: false, fgRgb: false },
      { text: ' plain', fg: null, bg: null, bold: false, fgRgb: false },
    ]);
    expect(styled[1]).toMatchObject([{ text: 'XYcdef', fg: null, bg: null, bold: false, fgRgb: false }]);

    expect(await session.exited).toEqual({ code: 0, signal: null });
    expect(session.running).toBe(false);
    expect(session.recentLines(5)).toEqual(['RED plain', 'XYcdef', '', '', '         here']);
  });

  it('delivers what is written to the executor on stdin', async () => {
    const session = await ptyHost().open(launch(sh('read line; echo "got:$line"; sleep 0.2')));
    session.write('hello\r');
    await untilScreen(session, '"got:hello"', (screen) => screen.lines().includes('got:hello'));
    expect(await session.exited).toEqual({ code: 0, signal: null });
  });

  it('passes a resize to the process and kills it with the default signal', async () => {
    const script = 'trap \'echo "size:$(stty size)"\' WINCH; echo ready; while :; do sleep 0.05; done';
    const spec = launch(sh(script));
    const session = await ptyHost({ cols: 80, rows: 24 }).open(spec);
    await untilScreen(session, '"ready"', (screen) => screen.lines().includes('ready'));

    session.resize(100, 30);
    expect(session.screen.cols).toBe(100);
    expect(session.screen.rows).toBe(30);
    await untilScreen(session, 'the new size from the process', (screen) =>
      screen.lines().includes('size:30 100'),
    );

    session.kill();
    expect(await session.exited).toEqual({ code: null, signal: 'SIGHUP' });
    expect(session.running).toBe(false);
    // Killed with the whole group: the wrapper recorded nothing.
    expect(readExitStatus(spec.statusPath)).toBeNull();
  });

  it('reports the exit code and records it in the status file', async () => {
    const spec = launch(sh('exit 7'));
    expect(readExitStatus(spec.statusPath)).toBeNull();
    const session = await ptyHost().open(spec);
    expect(await session.exited).toEqual({ code: 7, signal: null });
    expect(readExitStatus(spec.statusPath)).toEqual({ code: 7, signal: null });
    expect(readFileSync(spec.statusPath, 'utf8')).toBe('7\n');
    expect(existsSync(`${spec.statusPath}.tmp`)).toBe(false);
  });

  it('reports a signal for a killed session', async () => {
    const spec = launch(sh('echo up; sleep 30'));
    const session = await ptyHost().open(spec);
    await untilScreen(session, '"up"', (screen) => screen.lines().includes('up'));
    session.kill('SIGKILL');
    expect(await session.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(readExitStatus(spec.statusPath)).toBeNull();
  });

  it('passes argv byte-identical through the exit wrapper', async () => {
    const args = [
      'a b',
      "it's",
      '$HOME',
      '`id`',
      'line1\nline2',
      '"dq"',
      'back\\slash',
      '',
      '-n',
      '* ?',
      'ünï €',
    ];
    const spec = launch([...sh('printf "%s|" "$@"; sleep 0.2'), 'x', ...args]);
    const session = await ptyHost().open(spec);
    expect(await session.exited).toEqual({ code: 0, signal: null });
    // The tty turns \n into \r\n (onlcr); nothing else may differ.
    const expected = args.map((a) => `${a}|`).join('');
    expect(readFileSync(spec.logPath, 'utf8')).toBe(expected.replace(/\n/g, '\r\n'));
    expect(readExitStatus(spec.statusPath)).toEqual({ code: 0, signal: null });
  });

  it('keeps the screen model bounded while the transcript keeps every line', async () => {
    const rows = 24;
    const spec = launch(sh('seq 1 50000; sleep 0.2'));
    const session = await ptyHost({ cols: 80, rows }, 500).open(spec);
    await untilScreen(session, '"50000" on the screen', (screen) => screen.lines().includes('50000'));
    expect(await session.exited).toEqual({ code: 0, signal: null });
    await session.screen.flushed();

    expect(session.screen.bufferLength).toBeLessThanOrEqual(500 + rows);
    expect(session.recentLines(3)).toEqual(['49998', '49999', '50000']);
    const logged = readFileSync(spec.logPath, 'utf8').split('\r\n');
    expect(logged.at(-1)).toBe('');
    logged.pop();
    expect(logged.length).toBe(50000);
    expect(logged.every((line, i) => line === String(i + 1))).toBe(true);
  });
});

describe('the exit status file', () => {
  it('counts only a whole line: an empty or unfinished file means the executor has not ended', () => {
    const path = join(tempDir('lanes-status-'), 'attempt-1.status');
    expect(readExitStatus(path)).toBeNull();
    for (const [text, read] of [
      ['', null],
      ['12', null],
      ['12\n', { code: 12, signal: null }],
      ['x\n', null],
    ] as const) {
      writeFileSync(path, text);
      expect(readExitStatus(path), JSON.stringify(text)).toEqual(read);
    }
  });
});

describe('HeadlessHost', () => {
  it('writes output to the transcript and recentLines, and records the exit code', async () => {
    const spec = launch(sh('echo one; echo err >&2; echo two; echo three; exit 5'));
    const session = await headlessHost().open(spec);
    expect(session.host).toBe('headless');
    const exit = await session.exited;
    expect(exit).toEqual({ code: 5, signal: null });
    expect(session.running).toBe(false);
    expect(readExitStatus(spec.statusPath)).toEqual({ code: 5, signal: null });

    const recent = session.recentLines(10);
    expect(recent.filter((l) => l !== 'err')).toEqual(['one', 'two', 'three']);
    expect(recent).toContain('err');
    // stdout and stderr are separate pipes: only the order within each is fixed.
    const log = readFileSync(spec.logPath, 'utf8');
    expect(log.replace('err\n', '')).toBe('one\ntwo\nthree\n');
    expect(log).toContain('err\n');
  });

  it('passes argv byte-identical and the spec env', async () => {
    const args = ['a b', "it's", '$HOME', '`id`', 'line1\nline2', ''];
    const spec = launch([...sh('printf "%s|" "$@" "$LANES_TEST"'), 'x', ...args]);
    const session = await headlessHost().open(spec);
    expect(await session.exited).toEqual({ code: 0, signal: null });
    expect(readFileSync(spec.logPath, 'utf8')).toBe(`${[...args, '1'].map((a) => `${a}|`).join('')}`);
    // The last line has no newline: recentLines still gives it.
    expect(session.recentLines(2)).toEqual(["a b|it's|$HOME|`id`|line1", 'line2||1|']);
  });

  it('ends when the executor ends, even if a background child it left holds the output open', async () => {
    // A pty hangs up the executor's group when it exits; a pipe would wait for the child.
    const spec = launch(sh('sleep 30 & echo "bg:$!"; exit 4'));
    const session = await headlessHost().open(spec);
    const started = Date.now();
    expect(await session.exited).toEqual({ code: 4, signal: null });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(readExitStatus(spec.statusPath)).toEqual({ code: 4, signal: null });
    const bg = Number(/bg:(\d+)/.exec(readFileSync(spec.logPath, 'utf8'))?.[1]);
    expect(bg).toBeGreaterThan(0);
    await until(() => isGone(bg), `background child ${bg} to end`, poll());
  });

  it('starts it itself when the process helper is off, with the same transcript, exit and group', async () => {
    process.env.LANES_PROCESS_HELPER = '0';
    try {
      const spec = launch(sh('echo one; echo two; exit 6'));
      const session = await headlessHost().open(spec);
      expect(await session.exited).toEqual({ code: 6, signal: null });
      expect(readExitStatus(spec.statusPath)).toEqual({ code: 6, signal: null });
      expect(readFileSync(spec.logPath, 'utf8')).toBe('one\ntwo\n');
      expect(session.recentLines(5)).toEqual(['one', 'two']);
      const sleeper = await headlessHost().open(launch(sh('sleep 60')));
      expect(processGroupOf(sleeper.pid!)).toBe(sleeper.pid);
      sleeper.kill('SIGTERM');
      expect(await sleeper.exited).toEqual({ code: null, signal: 'SIGTERM' });
    } finally {
      delete process.env.LANES_PROCESS_HELPER;
    }
  });

  it('runs the executor in its own process group, and kill reaches a background grandchild', async () => {
    const spec = launch(sh('sleep 60 & echo "grandchild:$!"; wait'));
    const session = await headlessHost().open(spec);
    const grandchild = Number((await untilLine(session, /^grandchild:(\d+)$/))[1]);
    expect(session.pid).toBeGreaterThan(0);
    expect(processGroupOf(grandchild)).toBe(session.pid);
    expect(processGroupOf(session.pid!)).not.toBe(processGroupOf(process.pid));
    expect(isGone(grandchild)).toBe(false);

    session.kill('SIGTERM');
    expect(await session.exited).toEqual({ code: null, signal: 'SIGTERM' });
    await until(() => isGone(grandchild), `grandchild ${grandchild} to end`, poll());
  });
});

describe('runCheck', () => {
  it('runs an argv without a shell', async () => {
    const dir = tempDir('lanes-check-');
    const logPath = join(dir, 'logs', 'argv.log');
    const result = await runCheck(
      dir,
      { id: 'argv', run: ['printf', '%s\\n', '$(touch CANARY)', '$HOME'], timeout_ms: 10_000 },
      logPath,
    );
    expect(result).toMatchObject({ id: 'argv', exit_code: 0, timed_out: false, log_path: logPath });
    expect(readFileSync(logPath, 'utf8')).toBe('$(touch CANARY)\n$HOME\n');
    expect(result.tail).toContain('$(touch CANARY)');
    expect(readdirSync(dir)).toEqual(['logs']);
    expect(existsSync(join(dir, 'CANARY'))).toBe(false);
  });

  it('runs a string with sh -c in the folder and reports the exit code', async () => {
    const dir = tempDir('lanes-check-');
    const logPath = join(dir, 'shell.log');
    const result = await runCheck(
      dir,
      {
        id: 'shell',
        run: 'echo "$((6 * 7))" && pwd && echo "$LANES_CHECK" | tr a-z A-Z; exit 3',
        timeout_ms: 10_000,
      },
      logPath,
    );
    expect(result.exit_code).toBe(3);
    expect(result.timed_out).toBe(false);
    expect(readFileSync(logPath, 'utf8')).toBe(`42\n${dir}\nSHELL\n`);
  });

  it('writes the whole log and keeps the last lines as the tail', async () => {
    const dir = tempDir('lanes-check-');
    const logPath = join(dir, 'seq.log');
    const result = await runCheck(dir, { id: 'seq', run: ['seq', '1', '100'], timeout_ms: 10_000 }, logPath);
    expect(result.exit_code).toBe(0);
    const lines = readFileSync(logPath, 'utf8').trimEnd().split('\n');
    expect(lines).toEqual(Array.from({ length: 100 }, (_, i) => String(i + 1)));
    const tail = result.tail.trimEnd().split('\n');
    expect(tail.at(-1)).toBe('100');
    expect(tail).not.toContain('1');
    expect(tail.length).toBeGreaterThan(1);
  });

  it('ends when the check ends, killing a background child it forgot', async () => {
    const dir = tempDir('lanes-check-');
    const logPath = join(dir, 'forgot.log');
    const started = Date.now();
    const result = await runCheck(
      dir,
      { id: 'forgot', run: 'sleep 30 & echo "bg:$!"', timeout_ms: 20_000 },
      logPath,
    );
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result.exit_code).toBe(0);
    expect(result.timed_out).toBe(false);
    const bg = Number(/bg:(\d+)/.exec(readFileSync(logPath, 'utf8'))?.[1]);
    expect(bg).toBeGreaterThan(0);
    await until(() => isGone(bg), `background child ${bg} to end`, poll());
  });

  it('kills a check that outlives its timeout, with its background grandchild', async () => {
    const dir = tempDir('lanes-check-');
    const logPath = join(dir, 'slow.log');
    const started = Date.now();
    const result = await runCheck(
      dir,
      { id: 'slow', run: 'sleep 30 & echo "bg:$!"; sleep 30', timeout_ms: 300 },
      logPath,
    );
    const elapsed = Date.now() - started;
    expect(result.timed_out).toBe(true);
    expect(result.exit_code).toBeNull();
    expect(elapsed).toBeGreaterThanOrEqual(300);
    expect(elapsed).toBeLessThan(3000);
    const log = readFileSync(logPath, 'utf8');
    expect(log).toContain('timed out after 300 ms');
    expect(result.tail).toContain('timed out after 300 ms');
    const bg = Number(/bg:(\d+)/.exec(log)?.[1]);
    expect(bg).toBeGreaterThan(0);
    await until(() => isGone(bg), `background grandchild ${bg} to end`, poll());
  });
});
