import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll } from 'vitest';
import { until } from './until.js';

// The stub Herdr (test/fixtures/herdr-stub) for tests: a server daemon per test folder,
// the env a process inside "Herdr" would have, and a way to call the stub CLI.

export const HERDR_STUB_DIR = join(import.meta.dirname, '..', 'fixtures', 'herdr-stub');
export const HERDR_STUB = join(HERDR_STUB_DIR, 'herdr');

export interface StubResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface HerdrStub {
  dir: string;
  socket: string;
  pid: number;
  /** What lanes sees inside the caller pane w1:p1: HERDR_ENV, the socket, the pane id, PATH. */
  env: Record<string, string>;
  herdr(args: string[], env?: Record<string, string>): Promise<StubResult>;
  /** The mutating requests the server handled (tab.create, tab.close, tab.focus, pane.send_input, …). */
  requests(): { method?: string; params?: Record<string, unknown>; result?: Record<string, unknown> }[];
  /** Open tabs of workspace w1 as {tab_id, label}. */
  tabs(): Promise<{ tab_id: string; label: string }[]>;
  stop(): Promise<void>;
}

const running: HerdrStub[] = [];
afterAll(async () => {
  for (const stub of running.splice(0)) await stub.stop();
});

export async function startHerdrStub(options: { version?: string } = {}): Promise<HerdrStub> {
  // A short path: unix socket paths are limited to about 100 bytes.
  const dir = mkdtempSync(join(tmpdir(), 'herdr-'));
  const socket = join(dir, 'herdr.sock');
  const serverEnv = {
    ...process.env,
    HERDR_SOCKET_PATH: socket,
    ...(options.version ? { HERDR_STUB_VERSION: options.version } : {}),
  };
  const log = openSync(join(dir, 'server.log'), 'a');
  const child = spawn(process.execPath, [HERDR_STUB, 'server'], {
    cwd: dir,
    env: serverEnv,
    detached: true,
    stdio: ['ignore', log, log],
  });
  child.unref();
  await until(() => existsSync(join(dir, 'server.pid')), 'the stub server to listen', { timeoutMs: 10_000 });
  const pid = child.pid!;
  const env: Record<string, string> = {
    PATH: `${HERDR_STUB_DIR}:${process.env.PATH ?? ''}`,
    HERDR_ENV: '1',
    HERDR_SOCKET_PATH: socket,
    HERDR_PANE_ID: 'w1:p1',
    HERDR_TAB_ID: 'w1:t1',
    HERDR_WORKSPACE_ID: 'w1',
    ...(options.version ? { HERDR_STUB_VERSION: options.version } : {}),
  };
  const herdr = async (args: string[], extra: Record<string, string> = {}) => {
    const result = await execa(HERDR_STUB, args, {
      env: { ...env, ...extra },
      reject: false,
      stripFinalNewline: false,
    });
    return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
  };
  let stopped = false;
  const stub: HerdrStub = {
    dir,
    socket,
    pid,
    env,
    herdr,
    requests: () => {
      const file = join(dir, 'requests.jsonl');
      if (!existsSync(file)) return [];
      return readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as ReturnType<HerdrStub['requests']>[number]);
    },
    tabs: async () => {
      const result = await herdr(['tab', 'list', '--workspace', 'w1']);
      return (JSON.parse(result.stdout) as { result: { tabs: { tab_id: string; label: string }[] } }).result
        .tabs;
    },
    stop: async () => {
      if (stopped) return;
      stopped = true;
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // already gone
      }
      await until(() => !alive(pid), 'the stub server to stop', { timeoutMs: 10_000 }).catch(() =>
        process.kill(pid, 'SIGKILL'),
      );
      rmSync(dir, { recursive: true, force: true });
    },
  };
  running.push(stub);
  return stub;
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
