import type { LaneSession } from '../../src/hosts/host.js';
import { failTurnQa } from '../helpers/turn-verdict.js';
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claudeAgent } from '../../src/agents/claude.js';
import { tokenDigest } from '../../src/core/turns/hook-message.js';
import { startAttempt } from '../../src/core/records/kernel.js';
import { AgentTurns } from '../../src/coordinator/turns/agent-turns.js';
import { systemClock } from '../../src/process/system-clock.js';
import type { BatchFiles } from '../../src/store/batch-files.js';
import { startBatch } from '../helpers/batch.js';
import type { Driver } from '../helpers/batch.js';
import { CLI, makeRepo, snapshotTree } from '../helpers/repo.js';
import { until } from '../helpers/until.js';

// The hook channel end to end with real parts: a real batch with two enrolled lanes, the
// coordinator's side of the channel on a real unix socket, and the built `lanes hook`
// as the agent would run it. A message for another lane, a stale attempt or run, or a bad
// token is refused and journaled, and nothing moves; bad hook input is exit 2.

const TOKEN_A = 'a1'.repeat(24);
const TOKEN_B = 'b2'.repeat(24);

let d: Driver;
let store: BatchFiles;
let turns: AgentTurns;
const ended: string[] = [];

beforeAll(async () => {
  const repo = await makeRepo();
  d = await startBatch(
    repo,
    `batch: hk
max_parallel: 2
children:
  - { id: a, goal: Write a, scope: ["a/**"], acceptance: [{ id: ok, run: "test -f a/x" }] }
  - { id: b, goal: Write b, scope: ["b/**"], acceptance: [{ id: ok, run: "test -f b/x" }] }
`,
  );
  await d.provisionAll(await d.tick());
  store = d.ports().store as BatchFiles;
  for (const [task, token] of [
    ['a', TOKEN_A],
    ['b', TOKEN_B],
  ] as const) {
    const read = store.readKernel(task);
    if (read.kind !== 'ok') throw new Error(`no kernel for ${task}`);
    store.writeKernel(
      startAttempt(
        read.record,
        {
          host: 'pty',
          paneId: null,
          pid: null,
          pidStart: null,
          statusPath: null,
          sessionId: `s-${task}`,
          hookTokenSha256: tokenDigest(token),
        },
        new Date().toISOString(),
      ),
    );
  }
  turns = new AgentTurns(store, {
    // Both lanes' executors run (the runner's live sessions; only `running` is read here).
    sessionOf: () => ({ running: true }) as LaneSession,
    agentOf: () => claudeAgent,
    turnEnded: (notice) => void ended.push(notice.task_id),
    waiting: () => {},
    clock: systemClock,
  });
  await turns.open();
});

afterAll(async () => {
  await turns.close();
});

function runOf(task: string): string {
  return store.readRecord().children.find((c) => c.task_id === task)!.lane!.run_id!;
}

/** `lanes hook` as an agent runs it: in the lane it works in (`cwd`: by default the task's own). */
function hook(
  kind: string,
  env: Record<string, string>,
  stdin: string,
  cwd = env.LANES_TASK ? d.lanePath(env.LANES_TASK) : process.cwd(),
) {
  return execa(process.execPath, [CLI, 'hook', kind], {
    cwd,
    env: { NO_COLOR: '1', ...env },
    extendEnv: false,
    input: stdin,
    reject: false,
  });
}

function envFor(task: string, patch: Record<string, string> = {}): Record<string, string> {
  return {
    LANES_HOOK_SOCKET: turns.socketPath!,
    LANES_HOOK_TOKEN: task === 'a' ? TOKEN_A : TOKEN_B,
    LANES_TASK: task,
    LANES_RUN: runOf(task),
    LANES_ATTEMPT: '1',
    ...patch,
  };
}

const STOP_INPUT = JSON.stringify({
  session_id: 's-a',
  hook_event_name: 'Stop',
  last_assistant_message: 'Done.',
});
const refusals = () =>
  d.ports().store.readRecord() && readJournal().filter((e) => e.event === 'hook-refused');

function readJournal(): { event: string; task?: string; reason?: string }[] {
  const path = join(d.repo.stateDir, 'batches', 'hk.events.jsonl');
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { event: string });
}

describe('lanes hook against the coordinator', () => {
  it.each([
    [
      'a message for lane b with the token of lane a',
      () => envFor('b', { LANES_HOOK_TOKEN: TOKEN_A }),
      'other-lane',
    ],
    ['a stale attempt', () => envFor('a', { LANES_ATTEMPT: '2' }), 'stale-attempt'],
    ['a stale run', () => envFor('a', { LANES_RUN: 'run-old' }), 'stale-run'],
    ['a bad token', () => envFor('a', { LANES_HOOK_TOKEN: 'f'.repeat(48) }), 'bad-token'],
    // Lane b's executor read lane a's token and environment (same Unix user) and sends a's
    // turn end from its own lane: the token fits, the place does not.
    [
      "lane a's whole environment, sent from lane b",
      () => ({ ...envFor('a'), LANES_TASK: 'a' }),
      'outside-lane',
    ],
  ])('refuses %s, journals it and moves nothing', async (_what, env, reason) => {
    const tasksDir = join(d.repo.stateDir, 'batches', 'hk', 'tasks');
    const before = snapshotTree(tasksDir);
    const count = refusals().length;
    const e = env();
    const from = reason === 'outside-lane' ? d.lanePath('b') : d.lanePath(e.LANES_TASK!);
    const r = await hook('claude-stop', e, STOP_INPUT, from);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe(''); // the stop is not blocked
    expect(r.stderr).toContain(`refused: ${reason}`);
    expect(refusals().slice(count)).toMatchObject([{ event: 'hook-refused', reason }]);
    expect(snapshotTree(tasksDir)).toEqual(before);
    expect(ended).toEqual([]);
  });

  it('a turn end of the current attempt waits for QA; a failing check blocks the stop with its output', async () => {
    const waiting = hook('claude-stop', envFor('a'), STOP_INPUT);
    await until(() => ended.includes('a'), 'the turn end to reach the coordinator');
    expect(turns.isWaiting('a')).toBe(true);
    // QA as the tick runs it fails; the tick decides the verdict and asks for it as an effect.
    expect(await failTurnQa(d, store, turns, 'a')).toMatchObject([{ task_id: 'a', verdict: 'continue' }]);
    const r = await waiting;
    expect(r.exitCode).toBe(0);
    const out = JSON.parse(r.stdout) as { decision: string; reason: string };
    expect(out.decision).toBe('block');
    expect(out.reason).toContain('a/x is missing');
    expect(readJournal().filter((e) => e.event === 'rework-sent')).toMatchObject([{ task: 'a' }]);
  });

  it('is refused outside lanes: no channel in its environment is exit 2', async () => {
    const r = await hook('claude-stop', {}, STOP_INPUT);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('not started by lanes');
  });

  it('an unknown hook kind is exit 2', async () => {
    const r = await hook('gemini-stop', envFor('a'), STOP_INPUT);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('usage: lanes hook');
  });
});

const INPUTS = join(import.meta.dirname, '..', 'corpus', 'hook-inputs');
const inputs = readdirSync(INPUTS)
  .filter((n) => !n.endsWith('.expect'))
  .sort();

describe('the bad hook input corpus', () => {
  it.each(inputs)('%s: exit 2 with a clear message, nothing sent', async (name) => {
    const expectText = readFileSync(
      join(INPUTS, `${name.slice(0, -extname(name).length)}.expect`),
      'utf8',
    ).trim();
    const count = readJournal().length;
    const r = await hook('claude-stop', envFor('b'), readFileSync(join(INPUTS, name), 'utf8'));
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(expectText);
    expect(r.stdout).toBe('');
    expect(readJournal().length).toBe(count);
  });
});
