import type { LaneSession } from '../../src/hosts/host.js';
import { failTurnQa } from '../helpers/turn-verdict.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AGENTS, hookKinds, hookOf, registryProblems } from '../../src/agents/agents.js';
import type { AgentRegistry } from '../../src/agents/agents.js';
import { hookCommand } from '../../src/cli/commands/hook.js';
import { prepareLaunch } from '../../src/coordinator/executors/launch/agent-launch.js';
import type { PreparedLaunch } from '../../src/coordinator/executors/launch/agent-launch.js';
import { AgentTurns } from '../../src/coordinator/turns/agent-turns.js';
import { startAttempt } from '../../src/core/records/kernel.js';
import { tokenDigest } from '../../src/core/turns/hook-message.js';
import { systemClock } from '../../src/process/system-clock.js';
import type { BatchFiles } from '../../src/store/batch-files.js';
import { startBatch } from '../helpers/batch.js';
import type { Driver } from '../helpers/batch.js';
import { CLI, makeRepo, tempDir } from '../helpers/repo.js';
import { until } from '../helpers/until.js';
import { relayAgent } from './relay-agent.js';

// An agent is one file plus one registry line (docs/ARCHITECTURE.md "Adding an agent").
// The proof: relay (./relay-agent.ts, a test-only agent lanes does not ship) is added to
// the registry by the one line below, and goes through the real paths: its argv built for
// a lane of a real batch, its own hook input read by the real `lanes hook` into a hook
// message the coordinator's channel (a real unix socket) accepts as the lane's turn end,
// and the verdict printed in relay's own words.

const agents: AgentRegistry = { ...AGENTS, relay: relayAgent }; // ← the one registry line

let d: Driver;
let store: BatchFiles;
let turns: AgentTurns;
let launch: PreparedLaunch;
const ended: string[] = [];

beforeAll(async () => {
  d = await startBatch(
    await makeRepo(),
    `batch: rl
children:
  - { id: a, goal: Write a, scope: ["a/**"], acceptance: [{ id: ok, run: "test -f a/x" }] }
`,
  );
  await d.provisionAll(await d.tick());
  store = d.ports().store as BatchFiles;
  const read = store.readKernel('a');
  if (read.kind !== 'ok') throw new Error('no kernel for a');
  launch = prepareLaunch({
    batchId: 'rl',
    child: d.plan.children.find((c) => c.id === 'a')!,
    lanePath: d.lanePath('a'),
    kernel: read.record,
    profile: {
      agent: undefined,
      argv: ['relay', '--model', '{model}', '{prompt}'],
      prompt_patterns: [],
      env: {},
    },
    agent: agents.relay!,
    attempt: 1,
    logDir: tempDir('lanes-relay-logs-'),
    mode: 'interactive',
    hookArgv: [process.execPath, CLI, 'hook'],
  });
  // The attempt as the launch records it (its session, the digest of its hook token).
  store.writeKernel(
    startAttempt(
      read.record,
      {
        host: 'pty',
        paneId: null,
        pid: null,
        pidStart: null,
        statusPath: launch.statusPath,
        sessionId: launch.sessionId,
        resumed: launch.resumed,
        hookTokenSha256: tokenDigest(launch.token!),
      },
      new Date().toISOString(),
    ),
  );
  turns = new AgentTurns(store, {
    // The lane's executor runs (the runner's live session; only `running` is read here).
    sessionOf: () => ({ running: true }) as LaneSession,
    agentOf: () => agents.relay!,
    turnEnded: (notice) => void ended.push(notice.task_id),
    waiting: () => {},
    clock: systemClock,
  });
  await turns.open();
});

afterAll(async () => {
  await turns.close();
});

/** The hook command relay was given, as its argv (the adapter single-quotes each word). */
function hookCommandOf(argv: readonly string[]): string[] {
  const command = argv[argv.indexOf('--on-turn') + 1]!;
  return [...command.matchAll(/'((?:[^']|'\\'')*)'/g)].map((m) => m[1]!.replaceAll(`'\\''`, `'`));
}

function laneEnv(): NodeJS.ProcessEnv {
  return {
    LANES_HOOK_SOCKET: turns.socketPath!,
    LANES_HOOK_TOKEN: launch.token!,
    LANES_TASK: 'a',
    LANES_RUN: store.readRecord().children.find((c) => c.task_id === 'a')!.lane!.run_id!,
    LANES_ATTEMPT: String(launch.attempt),
  };
}

describe('a test-only agent in one file plus one registry line', () => {
  it('the registry with it is sound, and lanes ships without it', async () => {
    expect(registryProblems(agents)).toEqual([]);
    expect(hookKinds(agents)).toContain('relay-turn');
    expect(hookOf('relay-turn', agents)?.agent.name).toBe('relay');
    expect(hookOf('relay-turn')).toBeNull();
    const r = await execa(process.execPath, [CLI, 'hook', 'relay-turn'], { reject: false, input: '{}' });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('usage: lanes hook claude-stop|claude-notification|codex-stop|codex-session');
  });

  it('builds its argv for the lane: its conversation, its turn hook, the profile and the prompt', () => {
    const [program, flag, conversation, onTurn] = launch.argv;
    expect([program, flag, onTurn]).toEqual(['relay', '--conversation', '--on-turn']);
    expect(conversation).toBe(launch.sessionId);
    expect(hookCommandOf(launch.argv)).toEqual([process.execPath, CLI, 'hook', 'relay-turn']);
    expect(launch.argv.at(-1)).toBe(readFileSync(launch.promptFile, 'utf8'));
    expect(launch.argv.at(-1)).toContain('Write a');
    expect(launch.token).toMatch(/^[0-9a-f]{48}$/);
  });

  it('its turn end, read by the real lanes hook, is the lane’s turn end; a failed check comes back in relay’s words', async () => {
    const kind = hookCommandOf(launch.argv).slice(3);
    const out: string[] = [];
    const err: string[] = [];
    const said = JSON.stringify({ conversation: launch.sessionId, said: 'wrote a/y' });
    const exit = hookCommand(
      { cwd: d.lanePath('a'), stdout: (t) => out.push(t), stderr: (t) => err.push(t) },
      kind,
      {
        stdin: () => Promise.resolve(said),
        env: laneEnv(),
        agents,
      },
    );
    await until(() => ended.includes('a'), 'the turn end to reach the coordinator');
    expect(turns.isWaiting('a')).toBe(true);
    // QA as the tick runs it fails; the tick decides the verdict and asks for it as an effect.
    expect(await failTurnQa(d, store, turns, 'a')).toMatchObject([{ task_id: 'a', verdict: 'continue' }]);
    expect(await exit).toBe(0);
    expect(err).toEqual([]);
    expect(out.join('')).toMatch(/^again ".*a\/x is missing.*"\n$/s);
    const journal = readFileSync(join(d.repo.stateDir, 'batches', 'rl.events.jsonl'), 'utf8');
    expect(journal).toContain(
      `"event":"turn-ended","task":"a","attempt":1,"session_id":"${launch.sessionId}"`,
    );
  });

  it('its hook input in another shape is exit 2 naming the field', async () => {
    const call = hookCommand({ cwd: d.lanePath('a'), stdout: () => {}, stderr: () => {} }, ['relay-turn'], {
      stdin: () => Promise.resolve(JSON.stringify({ session_id: 's', last_assistant_message: 'x' })),
      env: laneEnv(),
      agents,
    });
    await expect(call).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringContaining('conversation'),
    });
  });
});
