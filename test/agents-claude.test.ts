import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentBatch, CHECK_OUTPUT, agentProcesses } from './helpers/agent-batch.js';
import { git, runCli } from './helpers/repo.js';

// The real Claude Code CLI (pinned, test/agents) as the executor of lanes batches, against
// the scripted model server: its turn end drives QA, a failing check's output goes back
// into the same conversation, and the batch completes with no keystroke.

interface Entry {
  event: string;
  task?: string;
  [field: string]: unknown;
}

function journal(repo: string, batch: string): Entry[] {
  const text = readFileSync(join(repo, '.git', 'lanes', 'batches', `${batch}.events.jsonl`), 'utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Entry);
}

function sessionOf(request: { headers: Record<string, string> }): string | undefined {
  return request.headers['x-claude-code-session-id'];
}

describe('claude, headless', () => {
  it('runs a 3-child batch; b fails its check once and passes in the same session with the check output', async () => {
    const b = await agentBatch('claude', { batch: 'ch' });
    const r = await runCli(['-C', b.repo, 'start', b.planFile, '--yes', '--headless'], { env: b.env });
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    const entries = journal(b.repo, 'ch');
    if (process.env.DEBUG_AGENTS) console.log(entries.map((e) => JSON.stringify(e)).join('\n'), b.repo);
    const spawned = entries.filter((e) => e.event === 'executor-spawned');
    const bSpawns = spawned.filter((e) => e.task === 'b');
    expect(bSpawns).toHaveLength(2);
    expect(bSpawns[1]!.resumed).toBe(true);
    expect(bSpawns[1]!.session_id).toBe(bSpawns[0]!.session_id);
    expect(spawned.filter((e) => e.task !== 'b')).toHaveLength(2);
    // The server saw b's second turn in the same session, carrying the check's output.
    const bRequests = b.requests().filter((q) => sessionOf(q) === bSpawns[0]!.session_id);
    expect(bRequests.some((q) => JSON.stringify(q.body).includes(CHECK_OUTPUT))).toBe(true);
    for (const id of ['a', 'b', 'c'])
      expect(await git(b.repo, 'show', `batch/ch:src/${id}.txt`)).toBe('right');
    // The transcript reads as lines, not JSON.
    const log = readFileSync(
      join(b.repo, '.git', 'lanes', 'batches', 'ch', 'logs', 'b', 'attempt-2.log'),
      'utf8',
    );
    expect(log).toMatch(/^\[claude\] → Write .*src\/b\.txt$/m);
    expect(log).not.toMatch(/^\{"type"/m);
    expect(agentProcesses(b.home)).toEqual([]);
  }, 120_000);
});
