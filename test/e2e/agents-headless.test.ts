import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentBatch, agentProcesses, CHECK_OUTPUT, journal } from '../helpers/agent-batch.js';
import type { AgentKind } from '../helpers/agent-batch.js';
import { git, runCli } from '../helpers/repo.js';

// The real agent CLIs (pinned, test/fixtures/agent-clis) as the executors of `lanes start --headless`,
// against the scripted model server: each run's exit ends its turn; b's failing check
// output goes back into the same conversation (the agent's resume by session id), and
// the batch completes with no keystroke. The transcripts read as lines, not JSON.

const TOOL_LINE: Record<AgentKind, RegExp> = {
  claude: /^\[claude\] → Write .*src\/b\.txt$/m,
  codex: /^\[codex\] → .*src\/b\.txt/m,
};

describe.each(['claude', 'codex'] as const)('%s, headless', (agent) => {
  it('runs a 3-child batch; b fails its check once and passes in the same session with the check output', async () => {
    const batch = `h-${agent}`;
    const b = await agentBatch(agent, { batch });
    const r = await runCli(['-C', b.repo, 'start', b.planFile, '--yes', '--headless'], { env: b.env });
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    const entries = journal(b.repo, batch);
    const spawned = entries.filter((e) => e.event === 'executor-spawned');
    const bSpawns = spawned.filter((e) => e.task === 'b');
    expect(bSpawns).toHaveLength(2);
    expect(spawned.filter((e) => e.task !== 'b')).toHaveLength(2);
    expect(bSpawns[1]!.resumed).toBe(true);
    // The second attempt continued b's conversation: the same session id, carrying the check's output.
    const kernel = JSON.parse(
      readFileSync(join(b.repo, '.git', 'lanes', 'batches', batch, 'tasks', 'b.json'), 'utf8'),
    ) as { attempts: { session_id: string | null }[] };
    const [first, second] = kernel.attempts;
    expect(first!.session_id).toBeTruthy();
    expect(second!.session_id).toBe(first!.session_id);
    const bRequests = b.requests().filter((q) => b.sessionOf(q) === first!.session_id);
    expect(bRequests.some((q) => JSON.stringify(q.body).includes(CHECK_OUTPUT))).toBe(true);
    for (const id of ['a', 'b', 'c'])
      expect(await git(b.repo, 'show', `batch/${batch}:src/${id}.txt`)).toBe('right');
    const log = readFileSync(
      join(b.repo, '.git', 'lanes', 'batches', batch, 'logs', 'b', 'attempt-2.log'),
      'utf8',
    );
    expect(log).toMatch(TOOL_LINE[agent]);
    expect(log).not.toMatch(/^\{"type"/m);
    // `lanes log --task` shows the lane's events and its transcripts.
    const shown = await runCli(['-C', b.repo, 'log', batch, '--task', 'b']);
    expect(shown.exitCode, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/qa-failed b/);
    expect(shown.stdout).toMatch(/── attempt 2 ──/);
    expect(shown.stdout).toMatch(TOOL_LINE[agent]);
    expect(agentProcesses(b.home)).toEqual([]);
  }, 120_000);
});
