import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, expect } from 'vitest';
import { LanesError } from '../../../src/core/basics/errors.js';
import type { MachineClient } from '../../../src/machines/link/machine-client.js';
import type { Host, LaunchSpec } from '../../../src/hosts/host.js';
import { tempDir } from '../../helpers/repo.js';

// A machine for the machine host's tests: this one, without ssh. Each op runs the real side
// script (`node dist/lanes/machine.js op`, built by `npm run build`) with the request on
// its stdin, as the link runs it on a machine; sshArgv runs the remote argv directly (what
// the shell there would run, minus ssh). Its tmux sessions are on the side's own socket
// (`tmux -L lanes`), which other tests share: a test's sessions are told apart by its batch.

export const SIDE_SCRIPT = resolve('dist/lanes/machine.js');

export interface LocalMachine extends MachineClient {
  /** The ops asked so far, by name (what the host asked the machine). */
  readonly asked: string[];
  /** The same, with their arguments. */
  readonly calls: { op: string; args: Record<string, unknown> }[];
  /** The file each attach the host started appends its pid to (a line each). */
  readonly attachPids: string;
}

export function localMachine(name = 'm1'): LocalMachine {
  const root = join(tempDir('lanes-machine-'), 'root');
  mkdirSync(root, { recursive: true });
  const attachPids = join(root, '..', 'attach-pids');
  const asked: string[] = [];
  const calls: { op: string; args: Record<string, unknown> }[] = [];
  return {
    name,
    root,
    asked,
    calls,
    attachPids,
    call<T>(op: string, args: unknown): Promise<T> {
      asked.push(op);
      calls.push({ op, args: args as Record<string, unknown> });
      return sideOp<T>(root, op, args);
    },
    sshArgv(remote) {
      // (each run of it records its pid, so that a test can drop "the connection" by that pid)
      const record = 'printf "%s\\n" "$$" >> "$0"; exec "$@"';
      return ['sh', '-c', record, attachPids, ...remote];
    },
  };
}

function sideOp<T>(root: string, op: string, args: unknown): Promise<T> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [SIDE_SCRIPT, 'op'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.once('error', fail);
    child.once('close', (code) => {
      const line = out.split('\n')[0] ?? '';
      let answer: { ok: boolean; value?: unknown; code?: string; message?: string };
      try {
        answer = JSON.parse(line) as typeof answer;
      } catch {
        return fail(new Error(`${op}: no answer (exit ${code}): ${out}${err}`));
      }
      if (answer.ok) done(answer.value as T);
      else fail(new LanesError(answer.code ?? 'side_failed', `${op}: ${answer.message ?? ''}`));
    });
    child.stdin.end(JSON.stringify({ op, root, args }));
  });
}

let counter = 0;

/** A batch id of its own for each test (the sessions of other tests are not its). */
export function testBatch(): string {
  counter += 1;
  return `hb${process.pid}x${counter}`;
}

/** A launch of `argv` for child `child` of `batch` on `machine`: its lane on the machine, its log folder here. */
export function remoteLaunch(
  machine: MachineClient,
  batch: string,
  child: string,
  argv: readonly string[],
  env: Record<string, string> = {},
): LaunchSpec {
  const lane = join(machine.root, 'lanes', machine.name, 'repo-0123456789ab', batch, child);
  mkdirSync(lane, { recursive: true });
  const logDir = join(tempDir('lanes-state-'), 'logs', child);
  mkdirSync(logDir, { recursive: true });
  const promptFile = join(logDir, 'prompt-1.md');
  writeFileSync(promptFile, `the prompt of ${child}\n`);
  return {
    taskId: child,
    runId: `run-${child}`,
    attempt: 1,
    cwd: lane,
    argv,
    env: { LANES_BATCH: batch, LANES_TASK: child, LANES_PROMPT_FILE: promptFile, ...env },
    logPath: join(logDir, 'attempt-1.log'),
    statusPath: join(logDir, 'attempt-1.status'),
  };
}

/** The tmux sessions of `batch` on the side's socket (none when its server is not running). */
export function tmuxSessionsOf(batch: string): string[] {
  const ls = spawnSync('tmux', ['-L', 'lanes', 'ls', '-F', '#{session_name}'], { encoding: 'utf8' });
  if (ls.status !== 0) return [];
  return ls.stdout.split('\n').filter((name) => name.startsWith(`lanes-${batch}-`));
}

/** Ends the sessions of `batch` a failed test left (by name: other tests' sessions are not touched). */
export function killSessionsOf(batch: string): void {
  for (const name of tmuxSessionsOf(batch)) spawnSync('tmux', ['-L', 'lanes', 'kill-session', '-t', name]);
}

/** The processes (pids) whose environment or command line names `batch`. */
export function processesOf(batch: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      // (the side's tmux server is every test's: it may have been started with a batch's environment)
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').startsWith('tmux: server')) continue;
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8');
      if (cmdline.includes(`lanes-${batch}-`) || environ.includes(`LANES_BATCH=${batch}\0`))
        found.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

/** The pids the attaches of `machine` recorded, in the order they were started. */
export function attachPidsOf(machine: LocalMachine): number[] {
  if (!existsSync(machine.attachPids)) return [];
  return readFileSync(machine.attachPids, 'utf8')
    .split('\n')
    .filter((line) => /^\d+$/.test(line))
    .map(Number);
}

/**
 * The hosts and batches a test file makes, ended after each test: every host disposed, and
 * nothing of each batch left running (its tmux sessions and processes; what was left is
 * killed, and the test fails naming it).
 */
export function endedAfterEach<H extends Host>(): { hosts: H[]; batches: string[] } {
  const made = { hosts: [] as H[], batches: [] as string[] };
  afterEach(async () => {
    await Promise.all(made.hosts.splice(0).map((h) => h.dispose()));
    for (const batch of made.batches.splice(0)) {
      const left = { sessions: tmuxSessionsOf(batch), processes: processesOf(batch) };
      killSessionsOf(batch);
      expect(left, `what batch ${batch} left running`).toEqual({ sessions: [], processes: [] });
    }
  });
  return made;
}
