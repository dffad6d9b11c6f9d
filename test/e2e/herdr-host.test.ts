import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { SQRT_FIX } from '../../src/demo/demo-project.js';
import { startHerdrStub } from '../helpers/herdr-stub.js';
import type { HerdrStub } from '../helpers/herdr-stub.js';
import { CLI, runCli, tempDir } from '../helpers/repo.js';
import { until } from '../helpers/until.js';

// The demo batch on the Herdr host (the stub herdr on PATH, HERDR_ENV=1): it ends exactly
// as with the other hosts — exit 3 with sqrt parked, then a fix and an approved resume
// → 0 — with one tab per lane, closed after integration, the parked lane's left open.

let stub: HerdrStub;
beforeAll(async () => {
  stub = await startHerdrStub();
});

const CHILDREN = ['add', 'sub', 'mul', 'pow', 'div', 'mean', 'sqrt', 'index'];

function journal(repo: string): { event: string; task?: string; host?: string }[] {
  const file = join(repo, '.git', 'lanes', 'batches', 'demo.events.jsonl');
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

/** The index child asks for a changelog word in its terminal: answer it through Herdr, like a user would. */
async function answerIndex(done: () => boolean): Promise<void> {
  let pane: string | null = null;
  await until(
    async () => {
      if (done()) return true;
      const create = stub.requests().find((r) => r.method === 'tab.create' && r.params?.label === 'index');
      pane ??= ((create?.result?.root_pane as { pane_id?: string } | undefined)?.pane_id ?? null) as
        string | null;
      if (!pane) return false;
      const read = await stub.herdr(['pane', 'read', pane, '--lines', '10']);
      return /changelog\? \(\d+ s\) *$/.test(read.stdout);
    },
    'the index lane to ask for a changelog word',
    { timeoutMs: 300_000 },
  );
  if (pane && !done()) await stub.herdr(['pane', 'run', pane, 'herdr-ok']);
}

describe('lanes demo on the herdr host', () => {
  it('parks sqrt (exit 3), then completes after the fix and an approved resume (exit 0)', async () => {
    const dir = join(tempDir('lanes-herdr-demo-'), 'demo');
    const env = { ...stub.env, LANES_DEMO_DELAY_MS: '0' };
    const run = execa(process.execPath, [CLI, 'demo', '--headless', '--host', 'herdr', '--dir', dir], {
      env: { NO_COLOR: '1', ...env },
      reject: false,
      stdin: 'ignore',
    });
    let finished = false;
    void run.finally(() => (finished = true));
    await answerIndex(() => finished);
    const first = await run;
    expect(first.stderr).toContain('sqrt: needs_human');
    expect(first.exitCode).toBe(3);

    const repo = join(dir, 'calc');
    const created = stub.requests().filter((r) => r.method === 'tab.create');
    // one tab per lane, in the caller's workspace, never focused; later attempts reuse it
    expect(created.map((r) => r.params?.label).sort()).toEqual([...CHILDREN].sort());
    for (const r of created) expect(r.params).toMatchObject({ workspace_id: 'w1', focus: false });
    expect(stub.requests().filter((r) => r.method === 'tab.focus')).toEqual([]);
    const closed = () => stub.requests().filter((r) => r.method === 'tab.close' && r.result?.type === 'ok');
    expect(closed()).toHaveLength(7);
    const open = (await stub.tabs()).map((t) => t.label);
    expect(open.sort()).toEqual(['shell', 'sqrt']);
    // the same executors ran as on the other hosts: div and sqrt needed more than one attempt
    const spawned = journal(repo).filter((e) => e.event === 'executor-spawned');
    expect(new Set(spawned.map((e) => e.host))).toEqual(new Set(['herdr']));
    expect(spawned.filter((e) => e.task === 'div')).toHaveLength(2);
    expect(spawned.filter((e) => e.task === 'sqrt').length).toBeGreaterThanOrEqual(2);
    const indexLog = readFileSync(
      join(repo, '.git', 'lanes', 'batches', 'demo', 'logs', 'index', 'attempt-1.log'),
      'utf8',
    );
    expect(indexLog).toContain('index: got: herdr-ok');

    writeFileSync(join(dir, 'calc.lanes', 'demo', 'sqrt', 'src', 'sqrt.mjs'), SQRT_FIX);
    const resumed = await runCli(['-C', repo, 'resume', '--headless', '--host', 'herdr', '--approve'], {
      env,
    });
    expect(resumed.stderr).toContain('demo: completed');
    expect(resumed.exitCode).toBe(0);
    expect((await stub.tabs()).map((t) => t.label)).toEqual(['shell']);
    expect(stub.requests().filter((r) => r.method === 'tab.create')).toHaveLength(CHILDREN.length);
    expect(closed()).toHaveLength(8);
  }, 900_000);
});
