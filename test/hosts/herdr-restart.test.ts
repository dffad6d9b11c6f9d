import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { liveWrapperPid, wrapperFiles } from '../../src/hosts/herdr/herdr-wrapper.js';
import { startHerdrStub } from '../helpers/herdr-stub.js';
import type { HerdrStub } from '../helpers/herdr-stub.js';
import { CLI, makeRepo, runCli, tempDir } from '../helpers/repo.js';
import { until } from '../helpers/until.js';

// Lane tabs outlive lanes: a kill -9 of the coordinator leaves the executors running in
// their (stub) Herdr tabs, and `lanes resume` re-attaches instead of launching them again.
// A Herdr that stops answering mid-batch parks nothing: lanes says so, waits and goes on.
// The executors wait for "go" files the test writes: no sleeps synchronise anything here.

let stub: HerdrStub;
beforeAll(async () => {
  stub = await startHerdrStub();
});

interface Event {
  event: string;
  task?: string;
  pane?: string;
  ended?: boolean;
}

function planFor(batch: string, go: string, chained: boolean): string {
  const child = (id: string, waits: boolean, blockedBy: string[]) => `
  - id: ${id}
    goal: Write ${id}
    blocked_by: [${blockedBy.join(', ')}]
    scope: ["${id}.txt"]
    acceptance: [{ id: has-${id}, run: "test -f ${id}.txt" }]
    run: "${waits ? `while [ ! -f ${go}/${id} ]; do sleep 0.05; done; ` : ''}echo ${id} > ${id}.txt"`;
  return `batch: ${batch}\nmax_parallel: 2\nexecutor: script\nchildren:${child('a', true, [])}${child('b', !chained, chained ? ['a'] : [])}\n`;
}

async function setUp(batch: string, chained = false) {
  const repo = await makeRepo();
  const go = tempDir('lanes-go-');
  const plan = join(tempDir('lanes-plan-'), 'plan.yaml');
  writeFileSync(plan, planFor(batch, go, chained));
  const events = (): Event[] => {
    const file = join(repo, '.git', 'lanes', 'batches', `${batch}.events.jsonl`);
    if (!existsSync(file)) return [];
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Event);
  };
  const kernel = (task: string) =>
    JSON.parse(
      readFileSync(join(repo, '.git', 'lanes', 'batches', batch, 'tasks', `${task}.json`), 'utf8'),
    ) as {
      attempts: { pane_id: string; status_path: string }[];
    };
  const lanes = (args: string[], env: Record<string, string> = {}) =>
    execa(process.execPath, [CLI, '-C', repo, ...args], {
      env: { NO_COLOR: '1', ...stub.env, ...env },
      reject: false,
      stdin: 'ignore',
    });
  return { repo, go, plan, events, kernel, lanes };
}

const count = (events: Event[], event: string, task: string) =>
  events.filter((e) => e.event === event && e.task === task).length;

describe('herdr host across a coordinator crash', () => {
  it('re-attaches to executors still running in their tabs after kill -9, and takes in one that ended meanwhile', async () => {
    const t = await setUp('crash');
    // no --host: inside (stub) Herdr, lanes picks the herdr host itself
    const first = t.lanes(['start', t.plan, '--yes', '--headless']);
    await until(
      () => count(t.events(), 'executor-spawned', 'a') + count(t.events(), 'executor-spawned', 'b') === 2,
      'both executors to start',
      { timeoutMs: 300_000 },
    );
    expect(t.events().filter((e) => e.event === 'executor-spawned')).toMatchObject([
      { host: 'herdr' },
      { host: 'herdr' },
    ]);
    first.kill('SIGKILL');
    await first;

    // the executors run on in their tabs
    const a = t.kernel('a').attempts[0]!;
    const b = t.kernel('b').attempts[0]!;
    expect(liveWrapperPid(wrapperFiles(a.status_path))).not.toBeNull();
    expect(liveWrapperPid(wrapperFiles(b.status_path))).not.toBeNull();
    // b finishes while lanes is away: its status file is all that says so
    writeFileSync(join(t.go, 'b'), '');
    await until(() => existsSync(b.status_path), "b's status file", { timeoutMs: 60_000 });

    const resumed = t.lanes(['resume', 'crash', '--headless', '--host', 'herdr']);
    await until(() => count(t.events(), 'executor-reattached', 'a') === 1, 'a to be re-attached', {
      timeoutMs: 300_000,
    });
    writeFileSync(join(t.go, 'a'), '');
    const result = await resumed;
    expect(result.stderr).toContain('crash: completed');
    expect(result.exitCode).toBe(0);

    const events = t.events();
    for (const task of ['a', 'b']) {
      expect(count(events, 'executor-spawned', task)).toBe(1);
      expect(count(events, 'executor-relaunched', task)).toBe(0);
    }
    expect(events.find((e) => e.event === 'executor-reattached' && e.task === 'a')).toMatchObject({
      pane: a.pane_id,
    });
    expect(events.find((e) => e.event === 'executor-reattached' && e.task === 'b')).toMatchObject({
      ended: true,
    });
    const labels = (await stub.tabs()).map((tab) => tab.label);
    expect(labels).not.toContain('a');
    expect(labels).not.toContain('b');
  }, 900_000);

  it('waits while Herdr does not answer, says so, and goes on when it answers again', async () => {
    const t = await setUp('stall', true);
    const run = t.lanes(['start', t.plan, '--yes', '--headless', '--host', 'herdr'], {
      LANES_HERDR_TIMEOUT_MS: '1500',
    });
    let stderr = '';
    run.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await until(() => count(t.events(), 'executor-spawned', 'a') === 1, 'a to start', { timeoutMs: 300_000 });
    process.kill(stub.pid, 'SIGSTOP');
    try {
      writeFileSync(join(t.go, 'a'), '');
      // a's exit is seen through its status file: a is integrated while Herdr is frozen
      await until(() => count(t.events(), 'integrated', 'a') === 1, 'a to be integrated', {
        timeoutMs: 300_000,
      });
      await until(() => stderr.includes('Herdr is not answering'), 'the notice', { timeoutMs: 300_000 });
    } finally {
      process.kill(stub.pid, 'SIGCONT');
    }
    const result = await run;
    expect(result.exitCode).toBe(0);
    expect(stderr).toContain('Herdr answers again');
    expect(t.events().filter((e) => e.event === 'parked')).toEqual([]);
    expect(count(t.events(), 'executor-spawned', 'b')).toBe(1);
  }, 900_000);

  it('falls back to the headless host when HERDR_ENV=1 but no Herdr answers', async () => {
    const t = await setUp('nohost', true);
    writeFileSync(join(t.go, 'a'), '');
    const result = await runCli(['-C', t.repo, 'start', t.plan, '--yes', '--headless'], {
      env: { ...stub.env, HERDR_SOCKET_PATH: join(t.go, 'nowhere.sock') },
    });
    expect(result.stderr).toMatch(
      /HERDR_ENV=1 but Herdr cannot be driven \(Herdr is not running\); using the headless host/,
    );
    expect(result.exitCode).toBe(0);
    expect(t.events().filter((e) => e.event === 'executor-spawned')).toMatchObject([
      { host: 'headless' },
      { host: 'headless' },
    ]);
  }, 300_000);
});
