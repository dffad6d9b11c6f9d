import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HerdrError } from '../../src/hosts/herdr/herdr-cli.js';
import { detectHerdr } from '../../src/hosts/herdr/herdr-detect.js';
import { HerdrHost } from '../../src/hosts/herdr/herdr-host.js';
import { parseLaneRef } from '../../src/hosts/herdr/herdr-tabs.js';
import type { LaunchSpec } from '../../src/hosts/host.js';
import { startHerdrStub } from '../helpers/herdr-stub.js';
import type { HerdrStub } from '../helpers/herdr-stub.js';
import { tempDir } from '../helpers/repo.js';

// The Herdr host driven against the stub herdr: every executor runs for real in a stub
// tab's shell through the wrapper script, so quoting, the status file, the marker and the
// exit path are the real ones.

let stub: HerdrStub;
let host: HerdrHost;
let dir: string;
let n = 0;

beforeAll(async () => {
  stub = await startHerdrStub();
  // The host's herdr calls inherit this process's env, as they would inside a Herdr pane.
  Object.assign(process.env, stub.env);
  host = new HerdrHost(await detectHerdr());
  dir = tempDir('lanes-herdr-');
});
afterAll(() => host.dispose());

function spec(argv: string[], env: Record<string, string> = {}): LaunchSpec {
  const task = `t${++n}`;
  const lane = join(dir, task);
  mkdirSync(join(lane), { recursive: true });
  const logs = join(dir, 'state', task);
  return {
    taskId: task,
    runId: `run-${task}`,
    attempt: 1,
    cwd: lane,
    argv,
    env,
    logPath: join(logs, 'attempt-1.log'),
    statusPath: join(logs, 'attempt-1.status'),
  };
}

describe('herdr host', () => {
  it('runs the executor argv byte for byte: spaces, quotes, $, backticks, newlines', async () => {
    const weird = [
      'plain',
      'with  two  spaces',
      "it's",
      '"double" \'single\'',
      '$HOME ${PATH}',
      '`id` $(touch pwned)',
      'line one\nline two\n',
      '',
      '*',
      'back\\slash \\n',
      'tab\there',
      '; echo injected',
      'ünïcödé ✓',
      '-n',
    ];
    const dump = join(dir, 'dump-argv.mjs');
    writeFileSync(
      dump,
      "import { writeFileSync } from 'node:fs';\n" +
        'writeFileSync(process.env.DUMP_TO, JSON.stringify({ argv: process.argv.slice(2), env: process.env.WEIRD_ENV, cwd: process.cwd() }));\n',
    );
    const out = join(dir, 'dumped.json');
    const s = spec([process.execPath, dump, ...weird], { DUMP_TO: out, WEIRD_ENV: "a'b $c `d`\ne" });
    const session = await host.open(s);
    expect(await session.exited).toEqual({ code: 0, signal: null });
    const dumped = JSON.parse(readFileSync(out, 'utf8'));
    expect(dumped).toEqual({ argv: weird, env: "a'b $c `d`\ne", cwd: s.cwd });
    expect(existsSync(join(s.cwd, 'pwned'))).toBe(false);
    expect(readFileSync(s.statusPath, 'utf8')).toBe('0\n');
  });

  it('records the exit status, shows the recent output, and opens an unfocused tab in the caller workspace', async () => {
    const s = spec(['sh', '-c', 'echo "hello from the lane"; exit 7']);
    const session = await host.open(s);
    const { tabId, paneId } = parseLaneRef(session.paneId!);
    expect(tabId).toMatch(/^w1:t\d+$/);
    expect(paneId).toMatch(/^w1:p\d+$/);
    expect(session.pid).toBeGreaterThan(0);
    expect(await session.exited).toEqual({ code: 7, signal: null });
    expect(session.recentLines(20)).toContain('hello from the lane');
    expect(readFileSync(s.logPath, 'utf8')).toContain('hello from the lane');
    const create = stub.requests().find((r) => r.method === 'tab.create' && r.params?.label === s.taskId);
    expect(create?.params).toMatchObject({ workspace_id: 'w1', cwd: s.cwd, focus: false });
    // the marker is printed for pane wait-output, never typed
    const typed = stub
      .requests()
      .filter((r) => r.method === 'pane.send_input')
      .map((r) => String(r.params?.text));
    expect(typed.some((t) => /LANES_.*_EXIT/.test(t))).toBe(false);
    const read = await stub.herdr(['pane', 'read', paneId, '--lines', '50']);
    expect(read.stdout).toMatch(/LANES_[0-9a-f]{12}_EXIT=7/);
  });

  it('reuses a lane tab for a later attempt, focuses it, kills it, and closes it', async () => {
    const first = spec(['sh', '-c', 'exit 0']);
    const session = await host.open(first);
    await session.exited;
    const again = {
      ...first,
      attempt: 2,
      statusPath: first.statusPath.replace('-1.', '-2.'),
      argv: ['sleep', '60'],
    };
    const second = await host.open(again);
    expect(parseLaneRef(second.paneId!).tabId).toBe(parseLaneRef(session.paneId!).tabId);
    await second.focus!();
    expect(
      stub
        .requests()
        .filter((r) => r.method === 'tab.focus')
        .at(-1)?.params,
    ).toEqual({
      tab_id: parseLaneRef(second.paneId!).tabId,
    });
    second.kill('SIGTERM');
    expect(await second.exited).toEqual({ code: 143, signal: null });
    await host.closeLane(first.taskId, first.cwd);
    const tabs = await stub.tabs();
    expect(tabs.some((t) => t.label === first.taskId)).toBe(false);
    expect(
      stub.requests().filter((r) => r.method === 'tab.create' && r.params?.label === first.taskId),
    ).toHaveLength(1);
  });

  it('re-attaches to a running executor by its recorded ids, and reports a gone one as lost', async () => {
    const s = spec(['sh', '-c', 'while [ ! -f go ]; do sleep 0.05; done']);
    const session = await host.open(s);
    const ref = session.paneId!;
    // a second lanes process (after a restart) finds it again
    const other = new HerdrHost(await detectHerdr());
    const found = await other.reattach(s, ref);
    expect(found?.paneId).toBe(ref);
    writeFileSync(join(s.cwd, 'go'), '');
    expect(await found!.exited).toEqual({ code: 0, signal: null });
    await session.exited;
    // the wrapper has ended and recorded nothing for this (fake) attempt: lost
    const never = { ...s, statusPath: join(dir, 'state', 'never', 'attempt-1.status') };
    expect(await other.reattach(never, ref)).toBeNull();
    await other.dispose();
  });

  it('refuses a Herdr older than 0.7.5 with a clear, typed error', async () => {
    const old = await startHerdrStub({ version: '0.7.4' });
    const env = { ...process.env, ...old.env, HERDR_BIN_PATH: join(old.env.PATH!.split(':')[0]!, 'herdr') };
    const saved = { ...process.env };
    Object.assign(process.env, env);
    try {
      const error = await detectHerdr(env).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HerdrError);
      expect(error).toMatchObject({ code: 'herdr_too_old', exitCode: 2 });
      expect((error as Error).message).toMatch(/Herdr 0\.7\.4; lanes needs Herdr 0\.7\.5 or newer/);
    } finally {
      for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key];
      Object.assign(process.env, saved);
      await old.stop();
    }
  });
});
