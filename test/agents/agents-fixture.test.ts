import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { claudeBin, claudeEnv, codexBin, codexEnv, serverRequests } from '../helpers/agents.js';
import {
  jsonLines,
  makeRepoAndLane,
  REASON,
  reworkTask,
  scriptedServer,
  userTexts,
} from '../helpers/agent-fixture.js';
import { processesWithEnv } from '../helpers/agent-pty.js';
import { tempDir } from '../helpers/repo.js';
import { until } from '../helpers/until.js';

// Smoke tests of the test fixtures, headless: the pinned real agent CLIs, pointed at the
// scripted model server, really edit files in a lane (a git worktree), and a resumed run
// continues the same session. docs/AGENTS.md says what each step relies on.

const { server, log } = await scriptedServer([
  reworkTask('# Task claude-p ('),
  reworkTask('# Task codex-exec ('),
]);

const PROMPT_CLAUDE = '# Task claude-p (batch b, attempt 1)\nDo it.';
const PROMPT_CODEX = '# Task codex-exec (batch b, attempt 1)\nDo it.';

async function claudeP(lane: string, home: string, ...args: string[]) {
  const run = await execa(
    claudeBin(),
    ['-p', ...args, '--output-format', 'stream-json', '--verbose', '--permission-mode', 'acceptEdits'],
    { cwd: lane, env: claudeEnv(home, server.url), extendEnv: false, stdin: 'ignore', reject: false },
  );
  expect(run.exitCode, run.stderr).toBe(0);
  return jsonLines(run.stdout);
}

async function codexExec(lane: string, codexHome: string, ...args: string[]) {
  const run = await execa(codexBin(), ['exec', '--json', '--sandbox', 'workspace-write', ...args], {
    cwd: lane,
    env: codexEnv(codexHome, server.url),
    extendEnv: false,
    stdin: 'ignore',
    reject: false,
  });
  expect(run.exitCode, run.stderr).toBe(0);
  return jsonLines(run.stdout);
}

describe('claude -p against the scripted model server', () => {
  it('edits the lane, and --resume with the check output continues the same session', async () => {
    const { lane } = await makeRepoAndLane();
    const home = tempDir('lanes-claude-home-');
    const first = await claudeP(lane, home, PROMPT_CLAUDE);
    expect(readFileSync(join(lane, 'out.txt'), 'utf8')).toBe('wrong\n');
    const sessionId = first.find((e) => e.type === 'system' && e.subtype === 'init')?.session_id;
    expect(typeof sessionId).toBe('string');
    expect(first.at(-1)).toMatchObject({
      type: 'result',
      subtype: 'success',
      result: 'The task is done.',
      session_id: sessionId,
    });

    const second = await claudeP(lane, home, '--resume', String(sessionId), REASON);
    expect(second.at(-1)).toMatchObject({ type: 'result', result: 'Fixed it.', session_id: sessionId });
    expect(readFileSync(join(lane, 'out.txt'), 'utf8')).toBe('right\n');
    const sent = serverRequests(log).filter((r) => r.headers['x-claude-code-session-id'] === sessionId);
    expect(sent.length).toBeGreaterThanOrEqual(6); // Read + Write + the final text, twice
    expect(
      sent.every((r) =>
        String((r.body as { metadata?: { user_id?: string } }).metadata?.user_id).includes(String(sessionId)),
      ),
    ).toBe(true);
    expect(userTexts(sent.at(-1)!)).toContain(REASON);
    await until(() => processesWithEnv('HOME', home).length === 0, 'no claude process left');
  });
});

describe('codex exec against the scripted model server', () => {
  it('edits the lane in the workspace-write sandbox, and exec resume continues the same thread', async () => {
    const { lane } = await makeRepoAndLane();
    const codexHome = tempDir('lanes-codex-home-');
    const first = await codexExec(lane, codexHome, PROMPT_CODEX);
    expect(readFileSync(join(lane, 'out.txt'), 'utf8')).toBe('wrong\n');
    const threadId = first.find((e) => e.type === 'thread.started')?.thread_id;
    expect(typeof threadId).toBe('string');
    expect(first).toContainEqual(
      expect.objectContaining({
        type: 'item.completed',
        item: expect.objectContaining({ type: 'agent_message', text: 'The task is done.' }),
      }),
    );
    expect(first.at(-1)).toMatchObject({ type: 'turn.completed' });

    const second = await codexExec(lane, codexHome, 'resume', String(threadId), REASON);
    expect(second.find((e) => e.type === 'thread.started')?.thread_id).toBe(threadId);
    expect(readFileSync(join(lane, 'out.txt'), 'utf8')).toBe('right\n');
    const sent = serverRequests(log).filter((r) => r.headers['thread-id'] === threadId);
    expect(sent).toHaveLength(4); // the command and the final text, twice
    expect(
      sent.every(
        (r) =>
          r.headers['session-id'] === threadId &&
          (r.body as { prompt_cache_key?: string }).prompt_cache_key === threadId,
      ),
    ).toBe(true);
    expect(userTexts(sent.at(-1)!)).toContain(REASON);
    await until(() => processesWithEnv('CODEX_HOME', codexHome).length === 0, 'no codex process left');
  });
});
