import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codexHookOverrides } from '../../src/agents/codex-hook-trust.js';
import { claudeBin, claudeEnv, codexBin, codexEnv, serverRequests } from '../helpers/agents.js';
import {
  HOOKS,
  logLines,
  makeRepoAndLane,
  REASON,
  reworkTask,
  scriptedServer,
  shellCommand as command,
  userTexts,
} from '../helpers/agent-fixture.js';
import { processesWithEnv, spawnAgent } from '../helpers/agent-pty.js';
import { tempDir } from '../helpers/repo.js';
import { until } from '../helpers/until.js';

// Smoke tests of the test fixtures, interactive: the real agent TUIs in a pty, with the
// end of a turn reported by the agent itself (Claude Code's Stop hook added with
// --settings; Codex's notify and Stop hook added and trusted with -c), a blocking hook
// handing the model its next instruction, and the session quit by its own command.

const { server, log: logFile } = await scriptedServer([
  reworkTask('# Task claude-stop ('),
  reworkTask('# Task codex-stop ('),
]);

describe('interactive claude with a Stop hook added for the session', () => {
  it('reports the session at the turn end, and a blocking reason reaches the model as its next instruction', async () => {
    const { repo, lane } = await makeRepoAndLane();
    const home = tempDir('lanes-claude-home-');
    const hookLog = join(tempDir('lanes-hook-log-'), 'stop.jsonl');
    const settings = {
      hooks: {
        Stop: [
          {
            hooks: [
              {
                type: 'command',
                command: command(process.execPath, join(HOOKS, 'record-stdin.mjs'), hookLog, REASON),
                timeout: 60,
              },
            ],
          },
        ],
      },
    };
    const agent = spawnAgent(
      claudeBin(),
      [
        '--settings',
        JSON.stringify(settings),
        '--permission-mode',
        'acceptEdits',
        '# Task claude-stop (batch b, attempt 1)\nDo it.',
      ],
      // Trusting the repository is enough for its worktree: Claude Code keys trust by the git root.
      { cwd: lane, env: claudeEnv(home, server.url, { trust: [repo] }) },
    );
    try {
      const stops = await until(
        () => (logLines(hookLog).length >= 2 ? logLines(hookLog) : null),
        'two Stop hook calls',
        {
          timeoutMs: 20_000,
          detail: () => `hook log: ${JSON.stringify(logLines(hookLog))}`,
        },
      );
      const [first, second] = stops;
      expect(first).toMatchObject({
        hook_event_name: 'Stop',
        cwd: lane,
        stop_hook_active: false,
        last_assistant_message: 'The task is done.',
      });
      expect(second).toMatchObject({
        session_id: first?.session_id,
        stop_hook_active: true,
        last_assistant_message: 'Fixed it.',
      });
      expect(readFileSync(join(lane, 'out.txt'), 'utf8')).toBe('right\n');
      const turns = serverRequests(logFile).filter(
        (r) => r.headers['x-claude-code-session-id'] === first?.session_id,
      );
      expect(turns.some((r) => userTexts(r).includes(`Stop hook feedback:\n${REASON}`))).toBe(true);
      agent.type('/exit');
      await until(async () => (await agent.screen()).includes('/exit'), 'the typed /exit on the screen');
      agent.type('\r');
      expect((await agent.exited).exitCode).toBe(0);
    } finally {
      agent.kill('SIGKILL');
    }
    await until(() => processesWithEnv('HOME', home).length === 0, 'no process of the claude session left', {
      detail: () => JSON.stringify(processesWithEnv('HOME', home)),
    });
  });
});

describe('interactive codex with notify and a Stop hook trusted for the session only', () => {
  it('notifies the turn end with the thread id, and a blocking reason reaches the model', async () => {
    const { repo, lane } = await makeRepoAndLane();
    const codexHome = tempDir('lanes-codex-home-');
    const logs = tempDir('lanes-hook-log-');
    const hookLog = join(logs, 'stop.jsonl');
    const notifyLog = join(logs, 'notify.jsonl');
    const notify = [process.execPath, join(HOOKS, 'record-argv.mjs'), notifyLog];
    const hooks = codexHookOverrides([
      {
        event: 'Stop',
        command: command(process.execPath, join(HOOKS, 'record-stdin.mjs'), hookLog, REASON),
        timeoutSeconds: 60,
      },
    ]);
    const agent = spawnAgent(
      codexBin(),
      [
        '--no-daemon',
        '--sandbox',
        'workspace-write',
        '-c',
        `notify=${JSON.stringify(notify)}`,
        ...hooks.flatMap((value) => ['-c', value]),
        '# Task codex-stop (batch b, attempt 1)\nDo it.',
      ],
      // Trusting the repository is enough for its worktree: Codex keys trust by the git root.
      { cwd: lane, env: codexEnv(codexHome, server.url, { trust: [repo] }) },
    );
    try {
      const isMainTurn = (n: Record<string, unknown>): boolean =>
        (n['input-messages'] as string[] | undefined)?.[0]?.startsWith('# Task codex-stop (') === true;
      const done = await until(() => logLines(notifyLog).find(isMainTurn), 'the notify of the main thread', {
        timeoutMs: 20_000,
        detail: () => `notify: ${JSON.stringify(logLines(notifyLog))}; screen:\n${agent.screenNow()}`,
      });
      expect(done).toMatchObject({
        type: 'agent-turn-complete',
        cwd: lane,
        'last-assistant-message': 'Fixed it.',
      });
      const stops = logLines(hookLog);
      expect(stops).toHaveLength(2);
      expect(stops[0]).toMatchObject({
        hook_event_name: 'Stop',
        session_id: done['thread-id'],
        stop_hook_active: false,
        last_assistant_message: 'The task is done.',
      });
      expect(stops[1]).toMatchObject({ stop_hook_active: true, last_assistant_message: 'Fixed it.' });
      expect(readFileSync(join(lane, 'out.txt'), 'utf8')).toBe('right\n');
      const turns = serverRequests(logFile).filter((r) => r.headers['thread-id'] === done['thread-id']);
      expect(
        turns.some((r) =>
          userTexts(r).some(
            (t) => t.startsWith('<hook_prompt ') && t.includes('CHECK FAILED: out.txt must say right'),
          ),
        ),
      ).toBe(true);
      agent.type('/quit');
      await until(async () => (await agent.screen()).includes('/quit'), 'the typed /quit on the screen');
      agent.type('\r');
      expect((await agent.exited).exitCode).toBe(0);
    } finally {
      agent.kill('SIGKILL');
    }
    await until(
      () => processesWithEnv('CODEX_HOME', codexHome).length === 0,
      'no process of the codex session left',
      {
        detail: () => JSON.stringify(processesWithEnv('CODEX_HOME', codexHome)),
      },
    );
  });
});
