import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codexHookOverrides } from '../../src/agents/codex-hook-trust.js';
import { claudeBin, claudeEnv, codexBin, codexEnv } from '../helpers/agents.js';
import { HOOKS, logLines, makeRepoAndLane, scriptedServer, shellCommand } from '../helpers/agent-fixture.js';
import { processesWithEnv, spawnAgent } from '../helpers/agent-pty.js';
import type { AgentPty } from '../helpers/agent-pty.js';
import { tempDir } from '../helpers/repo.js';
import { until } from '../helpers/until.js';

// Smoke tests of the test fixtures: the agents' own permission prompts. The agent reports
// its session at startup and the prompt through a hook (what lanes shows as `waiting`),
// the prompt is on its screen, and a keystroke typed into the pane answers it.

const { server } = await scriptedServer([
  {
    match: '# Task ask-claude (',
    turns: [{ actions: [{ write: 'asked.txt', content: 'allowed\n' }], say: 'Wrote it.' }],
  },
  {
    match: '# Task ask-codex (',
    turns: [{ actions: [{ run: 'echo allowed > asked.txt', escalate: true }], say: 'Ran it.' }],
  },
]);

const recorder = (log: string): string =>
  shellCommand(process.execPath, join(HOOKS, 'record-stdin.mjs'), log);

async function answerAndQuit(
  agent: AgentPty,
  key: string,
  done: () => boolean,
  quit: string,
  stillAsking: () => boolean = () => false,
): Promise<void> {
  agent.type(key);
  // Codex sometimes drops a key that arrives just after its question is drawn (seen on a
  // loaded machine): the key goes again while the question is still there. Enter is the
  // answer that can go twice: once the question is gone it lands in an empty input box,
  // where it does nothing.
  let typedAt = Date.now();
  await until(
    () => {
      if (done()) return true;
      if (stillAsking() && Date.now() - typedAt > 1000) {
        agent.type(key);
        typedAt = Date.now();
      }
      return false;
    },
    'the answered prompt to let the turn finish',
    { detail: () => agent.screenNow() },
  );
  agent.type(quit);
  await until(async () => (await agent.screen()).includes(quit), `the typed ${quit}`);
  agent.type('\r');
  expect((await agent.exited).exitCode).toBe(0);
}

/** The agent's PermissionRequest hook call, once it comes, and the SessionStart before it (from `lane`). */
async function permissionAsked(log: string, agent: { screenNow: () => string }, lane: string) {
  const asked = await until(
    () => logLines(log).find((e) => e.hook_event_name === 'PermissionRequest'),
    'the PermissionRequest hook',
    { timeoutMs: 20_000, detail: () => agent.screenNow() },
  );
  const started = logLines(log).find((e) => e.hook_event_name === 'SessionStart');
  expect(started).toMatchObject({ source: 'startup', cwd: lane });
  return { asked, started };
}

describe('permission prompts of the agents', () => {
  it('claude: Write asks in the default mode; the PermissionRequest hook names it; Enter says yes', async () => {
    const { repo, lane } = await makeRepoAndLane();
    const home = tempDir('lanes-claude-home-');
    const log = join(tempDir('lanes-hook-log-'), 'events.jsonl');
    const hook = [{ hooks: [{ type: 'command', command: recorder(log), timeout: 30 }] }];
    const settings = { hooks: { SessionStart: hook, PermissionRequest: hook } };
    const agent = spawnAgent(
      claudeBin(),
      ['--settings', JSON.stringify(settings), '# Task ask-claude (batch b, attempt 1)'],
      {
        cwd: lane,
        env: claudeEnv(home, server.url, { trust: [repo] }),
      },
    );
    try {
      const { asked, started } = await permissionAsked(log, agent, lane);
      expect(asked).toMatchObject({
        session_id: started?.session_id,
        tool_name: 'Write',
        tool_input: { file_path: join(lane, 'asked.txt') },
      });
      await until(
        async () => (await agent.screen()).includes('Do you want to create asked.txt?'),
        'the prompt on the screen',
        { detail: () => agent.screenNow() },
      );
      await answerAndQuit(agent, '\r', () => agent.screenNow().includes('Wrote it.'), '/exit');
      expect(readFileSync(join(lane, 'asked.txt'), 'utf8')).toBe('allowed\n');
    } finally {
      agent.kill('SIGKILL');
    }
    await until(() => processesWithEnv('HOME', home).length === 0, 'no claude process left');
  });

  it('codex: an escalated command asks; the PermissionRequest hook names it; Enter says yes', async () => {
    const { repo, lane } = await makeRepoAndLane();
    const codexHome = tempDir('lanes-codex-home-');
    const log = join(tempDir('lanes-hook-log-'), 'events.jsonl');
    const hooks = codexHookOverrides([
      { event: 'SessionStart', command: recorder(log), timeoutSeconds: 30 },
      { event: 'PermissionRequest', command: recorder(log), timeoutSeconds: 30 },
    ]);
    const agent = spawnAgent(
      codexBin(),
      ['--no-daemon', ...hooks.flatMap((v) => ['-c', v]), '# Task ask-codex (batch b, attempt 1)'],
      {
        cwd: lane,
        env: codexEnv(codexHome, server.url, { trust: [repo] }),
      },
    );
    try {
      const { asked, started } = await permissionAsked(log, agent, lane);
      expect(asked).toMatchObject({
        session_id: started?.session_id,
        tool_name: 'Bash',
        tool_input: { command: 'echo allowed > asked.txt' },
      });
      // The whole question, down to its last line: a key typed while Codex is still drawing
      // it can be lost (seen once on a loaded machine).
      await until(
        async () => {
          const screen = await agent.screen();
          return (
            screen.includes('Would you like to run the following command?') &&
            screen.includes('Press enter to confirm')
          );
        },
        'the prompt on the screen',
        { detail: () => agent.screenNow() },
      );
      await answerAndQuit(
        agent,
        '\r',
        () => agent.screenNow().includes('Ran it.'),
        '/quit',
        () => agent.screenNow().includes('Press enter to confirm'),
      );
      expect(readFileSync(join(lane, 'asked.txt'), 'utf8')).toBe('allowed\n');
    } finally {
      agent.kill('SIGKILL');
    }
    await until(() => processesWithEnv('CODEX_HOME', codexHome).length === 0, 'no codex process left');
  });
});
