import { existsSync, readdirSync, readFileSync, readlinkSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { startModelServer } from '../fixtures/model-server/server.mjs';
import type { ModelServer, Script } from '../fixtures/model-server/server.mjs';
import { agentsDir, claudeBin, claudeEnv, codexBin, codexEnv, serverRequests } from './agents.js';
import type { ServerRequest } from './agents.js';
import { git, makeRepo, tempDir } from './repo.js';
import { until } from './until.js';

// A three-child batch for a real agent CLI against the scripted model server: a, b and c
// each write src/<id>.txt; the check wants "right" in it. b's first answer writes "wrong",
// and only an instruction that carries the check's output ("expected right in src/b.txt")
// makes the server write "right" (the check's command line in the prompt spells it
// differently, so only its output can carry it). Everything lives in temp folders; the agent's HOME is
// private, so nothing of the user's (or another test's) is read or written.

export type AgentKind = 'claude' | 'codex';

export const CHECK_OUTPUT = 'expected right in src/b.txt';

export function reworkScript(ids: readonly string[] = ['a', 'b', 'c']): Script {
  return {
    tasks: ids.map((id) => ({
      match: `# Task ${id} (`,
      turns:
        id === 'b'
          ? [
              { actions: [{ write: 'src/b.txt', content: 'wrong\n' }], say: 'The task is done.' },
              { when: CHECK_OUTPUT, actions: [{ write: 'src/b.txt', content: 'right\n' }], say: 'Fixed.' },
            ]
          : [{ actions: [{ write: `src/${id}.txt`, content: 'right\n' }], say: 'The task is done.' }],
    })),
  };
}

export interface AgentBatch {
  repo: string;
  planFile: string;
  home: string;
  server: ModelServer;
  logFile: string;
  env: Record<string, string>;
  requests(): ServerRequest[];
  /** The agent's session (thread) id a request to the model server carries. */
  sessionOf(request: ServerRequest): string | undefined;
}

const servers: ModelServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

export async function agentBatch(
  agent: AgentKind,
  options: {
    batch: string;
    ids?: string[];
    script?: Script;
    argv?: string[];
    maxParallel?: number;
    /** The user trusts the repository in the agent (default true). */
    trusted?: boolean;
    qaFailureLimit?: number;
    review?: boolean;
  },
): Promise<AgentBatch> {
  const ids = options.ids ?? ['a', 'b', 'c'];
  const logFile = join(tempDir('lanes-model-log-'), 'requests.jsonl');
  const server = await startModelServer({ logFile, script: options.script ?? reworkScript(ids) });
  servers.push(server);
  const home = tempDir('lanes-agent-home-');
  const repo = await makeRepo({ 'README.md': '# test\n', 'src/.keep': '' });
  const argv =
    options.argv ??
    (agent === 'claude'
      ? [claudeBin(), '--permission-mode', 'acceptEdits', '{prompt}']
      : [codexBin(), '-c', 'sandbox_mode="workspace-write"', '{prompt}']);
  writeFileSync(
    join(repo, 'lanes.config.json'),
    `${JSON.stringify({ executors: { [agent]: { agent, argv } } }, null, 2)}\n`,
  );
  await git(repo, 'add', '-A');
  await git(repo, 'commit', '-q', '-m', 'lanes config');
  const plan = {
    batch: options.batch,
    executor: agent,
    max_parallel: options.maxParallel ?? 3,
    ...(options.qaFailureLimit ? { budget: { qa_failure_limit: options.qaFailureLimit } } : {}),
    children: ids.map((id) => ({
      id,
      goal: `write src/${id}.txt`,
      ...(options.review ? { review: 'human' } : {}),
      scope: [`src/${id}.txt`],
      acceptance: [
        {
          id: 'right',
          run: `grep -q right src/${id}.txt || { echo "expected right" "in src/${id}.txt, got: $(cat src/${id}.txt 2>&1)"; exit 1; }`,
        },
      ],
    })),
  };
  const planFile = join(tempDir('lanes-plan-'), `${options.batch}.plan.json`);
  writeFileSync(planFile, `${JSON.stringify(plan, null, 2)}\n`);
  // The user already trusts the repository in the agent (both key trust by the main
  // repository's path and count its git worktrees, so lanes' lanes, as the same project).
  const trust = options.trusted === false ? [] : [realpathSync(repo)];
  const env =
    agent === 'claude' ? claudeEnv(home, server.url, { trust }) : codexEnv(home, server.url, { trust });
  const header = agent === 'claude' ? 'x-claude-code-session-id' : 'thread-id';
  return {
    repo,
    planFile,
    home,
    server,
    logFile,
    env,
    requests: () => serverRequests(logFile),
    sessionOf: (request) => request.headers[header],
  };
}

/** The batch's journal entries, in order (none before the batch exists). */
export function journal(repo: string, batch: string): JournalLine[] {
  const path = join(repo, '.git', 'lanes', 'batches', `${batch}.events.jsonl`);
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as JournalLine);
}

export interface JournalLine {
  event: string;
  task?: string;
  [field: string]: unknown;
}

export function batchState(repo: string, batch: string): string | null {
  const path = join(repo, '.git', 'lanes', 'batches', `${batch}.json`);
  return existsSync(path)
    ? (JSON.parse(readFileSync(path, 'utf8')) as { batch_state: string }).batch_state
    : null;
}

/** Waits until the batch is completed and the agent's session closed (the journal says so). */
export async function untilCompletedAndClosed(repo: string, batch: string): Promise<void> {
  await until(() => batchState(repo, batch) === 'completed', 'the batch to complete', {
    timeoutMs: 60_000,
    detail: () => JSON.stringify(journal(repo, batch).slice(-5)),
  });
  await until(() => journal(repo, batch).some((e) => e.event === 'session-closed'), 'the session to close');
}

/**
 * Pids of the agent processes a test started: their executable or command line is in the
 * pinned agents' folder and their environment has the test's private HOME.
 */
export function agentProcesses(home: string): number[] {
  const dir = agentsDir();
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0');
      if (!environ.includes(`HOME=${home}`)) continue;
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'latin1');
      let exe = '';
      try {
        exe = readlinkSync(`/proc/${entry}/exe`);
      } catch {
        // a zombie has no exe
      }
      if (cmdline.includes(dir) || exe.startsWith(dir)) found.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}
