import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startModelServer } from './fixtures/model-server/server.mjs';
import type { ModelServer } from './fixtures/model-server/server.mjs';
import { claudeBin, claudeEnv, codexBin, codexEnv, serverRequests } from './helpers/agents.js';
import { git, makeRepo, tempDir } from './helpers/repo.js';

// Smoke tests of the test fixtures themselves: the pinned real agent CLIs, pointed at the
// scripted model server, really edit files in a real git repository. docs/AGENTS.md.

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
  const repo = await makeRepo();
  const lane = join(tempDir('lanes-lane-'), 'lane');
  await git(repo, 'worktree', 'add', '-q', '-b', 'lane/b/t', lane);
  return lane;
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
