import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { startModelServer } from '../fixtures/model-server/server.mjs';
import type { ModelServer, ScriptTask } from '../fixtures/model-server/server.mjs';
import type { ServerRequest } from './agents.js';
import { git, makeRepo, tempDir } from './repo.js';

// What the agent smoke tests share: a scripted model server for the whole file, lanes-like
// lanes (git worktrees outside the repository), and readers of the logs the agents and
// hooks leave.

/** The failing check's output a rework carries; characters that need escaping on purpose. */
export const REASON = 'CHECK FAILED: out.txt must say right <got: wrong> & more';

/** The hook and notify programs of test/fixtures/agent-hooks. */
export const HOOKS = join(import.meta.dirname, '..', 'fixtures', 'agent-hooks');

/** A task whose first turn writes `out.txt` wrong, and right only once it is told REASON. */
export function reworkTask(match: string): ScriptTask {
  return {
    match,
    turns: [
      { actions: [{ write: 'out.txt', content: 'wrong\n' }], say: 'The task is done.' },
      { when: REASON, actions: [{ write: 'out.txt', content: 'right\n' }], say: 'Fixed it.' },
    ],
  };
}

/** A scripted model server for the calling test file, closed after it; `log` is its request log. */
export async function scriptedServer(tasks: ScriptTask[]): Promise<{ server: ModelServer; log: string }> {
  const log = join(tempDir('lanes-model-log-'), 'requests.jsonl');
  const server = await startModelServer({ logFile: log, script: { tasks } });
  afterAll(() => server.close());
  return { server, log };
}

/** A repository, and a lane of it as lanes makes one: a worktree on its own branch, outside it. */
export async function makeRepoAndLane(): Promise<{ repo: string; lane: string }> {
  const repo = await makeRepo();
  const lane = join(tempDir('lanes-lane-'), 'lane');
  await git(repo, 'worktree', 'add', '-q', '-b', 'lane/b/t', lane);
  return { repo, lane };
}

/** A command line for the POSIX shell the agents run hook commands with. */
export function shellCommand(...argv: string[]): string {
  return argv.map((arg) => `'${arg.replaceAll("'", `'\\''`)}'`).join(' ');
}

/** The JSON lines of a text (an agent's stdout, a hook log); other lines are skipped. */
export function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** The JSON lines of a file written so far (none yet when it does not exist). */
export function logLines(file: string): Record<string, unknown>[] {
  return existsSync(file) ? jsonLines(readFileSync(file, 'utf8')) : [];
}

/** The texts of a request's user messages (both dialects), to find what reached the model. */
export function userTexts(request: ServerRequest): string[] {
  const body = request.body as {
    messages?: { role: string; content: unknown }[];
    input?: { role?: string; content?: unknown }[];
  };
  const messages = [...(body?.messages ?? []), ...(body?.input ?? [])].filter((m) => m.role === 'user');
  return messages.flatMap((m) => {
    if (typeof m.content === 'string') return [m.content];
    if (!Array.isArray(m.content)) return [];
    return (m.content as { text?: unknown }[]).flatMap((part) =>
      typeof part.text === 'string' ? [part.text] : [],
    );
  });
}
