import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startModelServer } from './fixtures/model-server/server.mjs';
import type { ModelServer } from './fixtures/model-server/server.mjs';
import { codexHookOverrides } from '../src/agents/codex-hook-trust.js';
import { claudeBin, claudeEnv, codexBin, codexEnv, serverRequests } from './helpers/agents.js';
import type { ServerRequest } from './helpers/agents.js';
import { processesWithEnv, spawnAgent } from './helpers/agent-pty.js';
import { git, makeRepo, tempDir } from './helpers/repo.js';
import { until } from './helpers/until.js';

// Smoke tests of the test fixtures themselves: the pinned real agent CLIs, pointed at the
// scripted model server, really edit files in a real git repository. docs/AGENTS.md.

// The failing check's output a blocking Stop hook hands back; the script writes the right
// file only when the agent's next request carries it.
const REASON = 'CHECK FAILED: out.txt must say right <got: wrong> & more';
const HOOKS = join(import.meta.dirname, 'fixtures', 'agent-hooks');

let server: ModelServer;
let logFile: string;

beforeAll(async () => {
  logFile = join(tempDir('lanes-model-log-'), 'requests.jsonl');
  server = await startModelServer({
    logFile,
    script: {
      tasks: [
        {
          match: '# Task claude-p (',
          turns: [
            { actions: [{ write: 'src/out.txt', content: 'written by claude\n' }], say: 'The task is done.' },
          ],
        },
        {
          match: '# Task claude-stop (',
          turns: [
            { actions: [{ write: 'out.txt', content: 'wrong\n' }], say: 'The task is done.' },
            { when: REASON, actions: [{ write: 'out.txt', content: 'right\n' }], say: 'Fixed it.' },
          ],
        },
        {
          match: '# Task codex-stop (',
          turns: [
            { actions: [{ write: 'out.txt', content: 'wrong\n' }], say: 'The task is done.' },
            { when: REASON, actions: [{ write: 'out.txt', content: 'right\n' }], say: 'Fixed it.' },
          ],
        },
        {
          match: '# Task codex-exec (',
          turns: [
            { actions: [{ write: 'src/codex.txt', content: 'written by codex\n' }], say: 'Codex is done.' },
          ],
        },
      ],
    },
  });
});

/** A lane as lanes makes it: a git worktree on its own branch, outside the repository. */
async function makeLane(): Promise<string> {
  return (await makeRepoAndLane()).lane;
}

async function makeRepoAndLane(): Promise<{ repo: string; lane: string }> {
  const repo = await makeRepo();
  const lane = join(tempDir('lanes-lane-'), 'lane');
  await git(repo, 'worktree', 'add', '-q', '-b', 'lane/b/t', lane);
  return { repo, lane };
}

/** One argument quoted for the POSIX shell the agents run hook commands with. */
const sh = (arg: string): string => `'${arg.replaceAll("'", `'\\''`)}'`;
const command = (...argv: string[]): string => argv.map(sh).join(' ');

function logLines(file: string): Record<string, unknown>[] {
  return existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>)
    : [];
}

/** The texts of a request's user messages (both dialects), to find what reached the model. */
function userTexts(request: ServerRequest): string[] {
  const body = request.body as {
    messages?: { role: string; content: unknown }[];
    input?: { role?: string; content?: unknown }[];
  };
  const messages = [...(body?.messages ?? []), ...(body?.input ?? [])].filter((m) => m.role === 'user');
  return messages.flatMap((m) =>
    typeof m.content === 'string'
      ? [m.content]
      : Array.isArray(m.content)
        ? (m.content as { text?: unknown }[]).flatMap((part) =>
            typeof part.text === 'string' ? [part.text] : [],
          )
        : [],
  );
}

const jsonLines = (text: string): Record<string, unknown>[] =>
  text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

afterAll(async () => {
  await server.close();
});

describe('claude -p against the scripted model server', () => {
  it('writes the scripted file and reports the session id it sent to the server', async () => {
    const repo = await makeRepo();
    const home = tempDir('lanes-claude-home-');
    const run = await execa(
      claudeBin(),
      [
        '-p',
        '# Task claude-p (batch b, attempt 1)\nDo it.',
        '--output-format',
        'stream-json',
        '--verbose',
        '--permission-mode',
        'acceptEdits',
      ],
      { cwd: repo, env: claudeEnv(home, server.url), extendEnv: false, stdin: 'ignore', reject: false },
    );
    expect(run.exitCode, run.stderr).toBe(0);
    expect(readFileSync(join(repo, 'src', 'out.txt'), 'utf8')).toBe('written by claude\n');
    const events = run.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const init = events.find((e) => e.type === 'system' && e.subtype === 'init');
    const result = events.at(-1);
    expect(result).toMatchObject({ type: 'result', subtype: 'success', result: 'The task is done.' });
    const sessionId = init?.session_id;
    expect(typeof sessionId).toBe('string');
    const sent = serverRequests(logFile).filter((r) => r.path.startsWith('/v1/messages'));
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.every((r) => r.headers['x-claude-code-session-id'] === sessionId)).toBe(true);
  });
});

describe('codex exec against the scripted model server', () => {
  it('edits a git worktree in the workspace-write sandbox and names its thread in every request', async () => {
    const lane = await makeLane();
    const codexHome = tempDir('lanes-codex-home-');
    const run = await execa(
      codexBin(),
      ['exec', '--json', '--sandbox', 'workspace-write', '# Task codex-exec (batch b, attempt 1)\nDo it.'],
      { cwd: lane, env: codexEnv(codexHome, server.url), extendEnv: false, stdin: 'ignore', reject: false },
    );
    expect(run.exitCode, run.stderr).toBe(0);
    expect(readFileSync(join(lane, 'src', 'codex.txt'), 'utf8')).toBe('written by codex\n');
    const events = jsonLines(run.stdout);
    const threadId = events.find((e) => e.type === 'thread.started')?.thread_id;
    expect(typeof threadId).toBe('string');
    expect(events).toContainEqual(
      expect.objectContaining({
        type: 'item.completed',
        item: expect.objectContaining({ text: 'Codex is done.' }),
      }),
    );
    expect(events.at(-1)).toMatchObject({ type: 'turn.completed' });
    const sent = serverRequests(logFile).filter((r) => r.headers['thread-id'] === threadId);
    expect(sent.map((r) => r.path)).toEqual(['/v1/responses', '/v1/responses']);
    expect(sent.every((r) => r.headers['session-id'] === threadId)).toBe(true);
  });
});

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
