import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startModelServer } from './fixtures/model-server/server.mjs';
import type { ModelServer } from './fixtures/model-server/server.mjs';
import { claudeBin, claudeEnv, serverRequests } from './helpers/agents.js';
import { makeRepo, tempDir } from './helpers/repo.js';

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
      ],
    },
  });
});

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
