import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alive, startHerdrStub } from './helpers/herdr-stub.js';
import type { HerdrStub } from './helpers/herdr-stub.js';
import { until } from './helpers/until.js';

// The stub herdr checked against the contract in reference/herdr.md: argument forms, the
// JSON envelope on stdout (exit 0), the error envelope on stderr (exit 1), plain-text usage
// errors (exit 2), `pane run` printing nothing and `pane read` printing raw text.

let stub: HerdrStub;
let cwd: string;

beforeAll(async () => {
  stub = await startHerdrStub();
  cwd = mkdtempSync(join(tmpdir(), 'herdr-cwd-'));
});
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

interface TabInfo {
  tab_id: string;
  workspace_id: string;
}
interface PaneInfo {
  pane_id: string;
}
interface Envelope {
  id: string;
  result: Record<string, unknown> & { matched_line?: string; process_info?: ProcessInfo };
  error: { code: string; message: string };
}
interface ProcessInfo {
  shell_pid: number;
  foreground_process_group_id: number;
  foreground_processes: { pid: number; argv: string[] }[];
}

const json = (text: string) => JSON.parse(text) as Envelope;

async function createTab(label: string, extra: string[] = ['--workspace', 'w1']) {
  const created = await stub.herdr(['tab', 'create', ...extra, '--cwd', cwd, '--label', label, '--no-focus']);
  expect(created.exitCode).toBe(0);
  return json(created.stdout).result as unknown as { tab: TabInfo; root_pane: PaneInfo };
}

async function processInfo(pane: string) {
  const result = await stub.herdr(['pane', 'process-info', '--pane', pane]);
  return json(result.stdout).result.process_info!;
}

const idle = async (pane: string) => {
  const info = await processInfo(pane);
  return (
    info.foreground_process_group_id === info.shell_pid &&
    info.foreground_processes.every((p) => p.pid === info.shell_pid)
  );
};

describe('herdr stub: detection and identity', () => {
  it('prints its version and a bare server status object', async () => {
    const version = await stub.herdr(['--version']);
    expect(version).toMatchObject({ exitCode: 0, stdout: 'herdr 0.8.2\n' });
    const status = await stub.herdr(['status', 'server', '--json']);
    expect(status.exitCode).toBe(0);
    expect(json(status.stdout)).toMatchObject({
      status: 'running',
      running: true,
      version: '0.8.2',
      protocol: 20,
      compatible: true,
    });
  });

  it('resolves the caller pane by --pane and by --current (HERDR_PANE_ID)', async () => {
    for (const args of [['--pane', 'w1:p1'], ['--current']]) {
      const current = await stub.herdr(['pane', 'current', ...args]);
      expect(current.exitCode).toBe(0);
      expect(json(current.stdout)).toMatchObject({
        id: 'cli:pane:current',
        result: { type: 'pane_current', pane: { pane_id: 'w1:p1', tab_id: 'w1:t1', workspace_id: 'w1' } },
      });
    }
  });
});

describe('herdr stub: tabs and panes', () => {
  it('creates a tab in the given workspace, unfocused, rooted at the cwd; without --workspace in the UI-active one', async () => {
    const { tab, root_pane } = await createTab('lane-a');
    expect(tab).toMatchObject({ workspace_id: 'w1', label: 'lane-a', focused: false, pane_count: 1 });
    expect(tab.tab_id).toMatch(/^w1:t\d+$/);
    expect(root_pane).toMatchObject({ workspace_id: 'w1', tab_id: tab.tab_id, cwd });
    expect(root_pane.pane_id).toMatch(/^w1:p\d+$/);
    const elsewhere = await createTab('lane-b', []);
    expect(elsewhere.tab.workspace_id).toBe('w2');
  });

  it('runs typed commands in a real shell: pane run prints nothing, pane read prints raw text', async () => {
    const { root_pane } = await createTab('lane-run');
    const pane = root_pane.pane_id as string;
    await until(() => idle(pane), 'an idle shell', { timeoutMs: 10_000 });
    // args are joined with one space: not argv-preserving
    const run = await stub.herdr(['pane', 'run', pane, 'echo', 'one   two', 'three']);
    expect(run).toEqual({ exitCode: 0, stdout: '', stderr: '' });
    const matched = await stub.herdr([
      'pane',
      'wait-output',
      pane,
      '--match',
      'one two three',
      '--timeout',
      '5000',
    ]);
    expect(matched.exitCode).toBe(0);
    expect(json(matched.stdout)).toMatchObject({
      id: 'cli:pane:wait_output',
      result: { type: 'output_matched', pane_id: pane, matched_line: 'one two three' },
    });
    const read = await stub.herdr(['pane', 'read', pane, '--source', 'recent-unwrapped', '--lines', '20']);
    expect(read.exitCode).toBe(0);
    expect(read.stdout.startsWith('{')).toBe(false);
    expect(read.stdout.split('\n')).toContain('one two three');
    expect(read.stdout.endsWith('\n')).toBe(false); // the prompt is the last, unfinished line
    const eqForm = await stub.herdr(['pane', 'read', '--lines=5', pane, '--source=recent']);
    expect(eqForm.exitCode).toBe(0);
  });

  it('tells a busy shell from an idle one (process-info), and ctrl+c reaches the foreground job', async () => {
    const { root_pane } = await createTab('lane-busy');
    const pane = root_pane.pane_id as string;
    await until(() => idle(pane), 'an idle shell', { timeoutMs: 10_000 });
    await stub.herdr(['pane', 'run', pane, 'sleep 30']);
    await until(async () => !(await idle(pane)), 'a busy shell', { timeoutMs: 10_000 });
    const busy = await processInfo(pane);
    expect(busy.foreground_processes.some((p) => p.argv.includes('30'))).toBe(true);
    expect(await stub.herdr(['pane', 'send-keys', pane, 'ctrl+c'])).toMatchObject({
      exitCode: 0,
      stdout: '',
    });
    await until(() => idle(pane), 'the shell idle again', { timeoutMs: 10_000 });
  });

  it('matches wait-output regexes and times out with a timeout error', async () => {
    const { root_pane } = await createTab('lane-wait');
    const pane = root_pane.pane_id as string;
    await stub.herdr(['pane', 'run', pane, "printf 'MARK_%s\\n' 42"]);
    const matched = await stub.herdr([
      'pane',
      'wait-output',
      pane,
      '--regex',
      'MARK_[0-9]+',
      '--timeout',
      '5000',
    ]);
    expect(json(matched.stdout).result.matched_line).toBe('MARK_42');
    const late = await stub.herdr([
      'pane',
      'wait-output',
      pane,
      '--regex',
      'NEVER_[0-9]+',
      '--timeout',
      '200',
    ]);
    expect(late.exitCode).toBe(1);
    expect(late.stdout).toBe('');
    expect(json(late.stderr).error.code).toBe('timeout');
  });

  it('focuses and closes tabs; a closed tab kills its processes', async () => {
    const { tab, root_pane } = await createTab('lane-close');
    const pane = root_pane.pane_id as string;
    const focus = await stub.herdr(['tab', 'focus', tab.tab_id]);
    expect(json(focus.stdout)).toMatchObject({
      result: { type: 'tab_info', tab: { tab_id: tab.tab_id, focused: true } },
    });
    const shell = (await processInfo(pane)).shell_pid;
    const close = await stub.herdr(['tab', 'close', tab.tab_id]);
    expect(json(close.stdout)).toMatchObject({ id: 'cli:tab:close', result: { type: 'ok' } });
    expect((await stub.tabs()).map((t) => t.tab_id)).not.toContain(tab.tab_id);
    await until(() => !alive(shell), 'the shell to be killed', { timeoutMs: 5000 });
    const gone = await stub.herdr(['pane', 'get', pane]);
    expect(gone.exitCode).toBe(1);
    expect(json(gone.stderr)).toMatchObject({ id: 'cli:pane:get', error: { code: 'pane_not_found' } });
  });

  it('closes a tab whose only shell exits', async () => {
    const { tab, root_pane } = await createTab('lane-exit');
    await until(() => idle(root_pane.pane_id), 'an idle shell', { timeoutMs: 10_000 });
    await stub.herdr(['pane', 'run', root_pane.pane_id, 'exit']);
    await until(async () => !(await stub.tabs()).some((t) => t.tab_id === tab.tab_id), 'the tab to close', {
      timeoutMs: 10_000,
    });
  });
});

describe('herdr stub: errors', () => {
  it('prints server errors as an error envelope on stderr with exit 1', async () => {
    const missing = await stub.herdr(['pane', 'read', 'w1:p999']);
    expect(missing).toMatchObject({ exitCode: 1, stdout: '' });
    expect(json(missing.stderr)).toEqual({
      id: 'cli:pane:read',
      error: { code: 'pane_not_found', message: expect.any(String) },
    });
  });

  it('prints usage errors as plain text with exit 2', async () => {
    const noId = await stub.herdr(['pane', 'read']);
    expect(noId.exitCode).toBe(2);
    expect(noId.stderr).toMatch(/^usage: herdr pane read/);
    const unknown = await stub.herdr(['bogus']);
    expect(unknown).toMatchObject({ exitCode: 2, stderr: 'unknown command: bogus\n' });
    const badOption = await stub.herdr(['tab', 'create', '--nope']);
    expect(badOption).toMatchObject({ exitCode: 2, stderr: 'unknown option: --nope\n' });
  });

  it('reports a protocol mismatch between client and server', async () => {
    const result = await stub.herdr(['tab', 'list'], { HERDR_STUB_CLIENT_VERSION: '0.8.0' });
    expect(result.exitCode).toBe(1);
    expect(json(result.stderr).error.code).toBe('protocol_mismatch');
    const status = await stub.herdr(['status', 'server', '--json'], { HERDR_STUB_CLIENT_VERSION: '0.8.0' });
    expect(json(status.stdout)).toMatchObject({ running: true, compatible: false });
  });

  it('reports server_not_running when no server listens (and status says not_running, exit 0)', async () => {
    const nowhere = { HERDR_SOCKET_PATH: join(cwd, 'none.sock') };
    const result = await stub.herdr(['tab', 'list'], nowhere);
    expect(result.exitCode).toBe(1);
    expect(json(result.stderr).error.code).toBe('server_not_running');
    const status = await stub.herdr(['status', 'server', '--json'], nowhere);
    expect(status.exitCode).toBe(0);
    expect(json(status.stdout)).toMatchObject({ status: 'not_running', running: false });
  });
});
