import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { agentBatch, agentProcesses, CHECK_OUTPUT } from './helpers/agent-batch.js';
import { CLI, git } from './helpers/repo.js';
import { terminalEnv, Tmux } from './helpers/tmux.js';
import { until } from './helpers/until.js';

// The real Claude Code CLI in lanes' TUI, in a real terminal (tmux), with no keystroke:
// each agent draws its own screen in its pane; its Stop hook ends the turn; QA runs while
// it waits; b's failing check goes back into the same session through the hook; passed
// lanes are integrated and their sessions closed (Claude's own /exit).

const tmuxes: Tmux[] = [];
afterAll(async () => {
  await Promise.all(tmuxes.map((t) => t.kill()));
});

interface Entry {
  event: string;
  task?: string;
  [field: string]: unknown;
}

function journal(repo: string, batch: string): Entry[] {
  const path = join(repo, '.git', 'lanes', 'batches', `${batch}.events.jsonl`);
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Entry);
}

function batchState(repo: string, batch: string): string | null {
  const path = join(repo, '.git', 'lanes', 'batches', `${batch}.json`);
  return existsSync(path)
    ? (JSON.parse(readFileSync(path, 'utf8')) as { batch_state: string }).batch_state
    : null;
}

describe('claude in the TUI', () => {
  it('completes a 3-child batch with rework in the same session and no keystroke', async () => {
    const b = await agentBatch('claude', { batch: 'ct' });
    const tmux = new Tmux(terminalEnv(b.env));
    tmuxes.push(tmux);
    await tmux.start([process.execPath, CLI, '-C', b.repo, 'start', b.planFile, '--yes'], { cwd: b.repo });
    let screen = '';
    let sawAgentScreen = false;
    await until(
      async () => {
        screen = await tmux.capture();
        // Claude's own screen in the selected lane's pane: its tool call and its input box.
        if (/│● Write\(src\/a\.txt\)/.test(screen) && /│❯ /.test(screen)) sawAgentScreen = true;
        return (
          batchState(b.repo, 'ct') === 'completed' &&
          journal(b.repo, 'ct').filter((e) => e.event === 'session-closed').length === 3
        );
      },
      'the batch to complete',
      {
        timeoutMs: 120_000,
        everyMs: 200,
        detail: () => `${JSON.stringify(journal(b.repo, 'ct').slice(-8))}\n${screen}`,
      },
    );
    const entries = journal(b.repo, 'ct');
    expect(sawAgentScreen).toBe(true);
    // Every turn end came from the Stop hook; b's rework went back through it, into the same session.
    const spawned = entries.filter((e) => e.event === 'executor-spawned');
    const bSession = spawned.find((e) => e.task === 'b')!.session_id as string;
    expect(
      b
        .requests()
        .some(
          (q) =>
            q.headers['x-claude-code-session-id'] === bSession &&
            JSON.stringify(q.body).includes(CHECK_OUTPUT),
        ),
    ).toBe(true);
    expect(entries.filter((e) => e.event === 'turn-ended' && e.task === 'b')).toHaveLength(2);
    expect(entries.filter((e) => e.event === 'executor-exited')).toEqual([]);
    expect(entries.filter((e) => e.event === 'session-closed').map((e) => e.how)).toEqual([
      'quit',
      'quit',
      'quit',
    ]);
    expect(entries.filter((e) => e.event === 'rework-sent' && e.task === 'b')).toHaveLength(1);
    expect(entries.filter((e) => e.event === 'executor-spawned')).toHaveLength(3);
    for (const id of ['a', 'b', 'c'])
      expect(await git(b.repo, 'show', `batch/ct:src/${id}.txt`)).toBe('right');
    expect(agentProcesses(b.home)).toEqual([]);
    await tmux.kill();
  }, 180_000);
});
