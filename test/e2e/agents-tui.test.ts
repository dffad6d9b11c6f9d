import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  agentBatch,
  agentProcesses,
  batchState,
  untilCompletedAndClosed,
  CHECK_OUTPUT,
  journal,
} from '../helpers/agent-batch.js';
import type { AgentKind } from '../helpers/agent-batch.js';
import { CLI, git } from '../helpers/repo.js';
import { terminalEnv, Tmux } from '../helpers/tmux.js';
import { until } from '../helpers/until.js';

// The real agent CLIs in lanes' TUI, in a real terminal (tmux), with no keystroke: each
// agent draws its own screen in its pane; its Stop hook (added for that session only)
// ends the turn; QA runs while it waits; b's failing check goes back into the same
// session as the hook's answer; passed lanes are integrated and their sessions closed by
// the agent's own quit command.

const tmuxes: Tmux[] = [];
afterAll(async () => {
  await Promise.all(tmuxes.map((t) => t.kill()));
});

/** The agent's own screen in the selected lane's pane (lane a): its work on src/a.txt and its input box. */
const AGENT_SCREEN: Record<AgentKind, RegExp> = {
  claude: /│● Write\(src\/a\.txt\)[\s\S]*│❯/,
  codex: /│• Ran .*src\/a\.txt[\s\S]*│›/,
};

describe.each(['claude', 'codex'] as const)('%s in the TUI', (agent) => {
  it('completes a 3-child batch, b reworked in the same session, with no keystroke', async () => {
    const batch = `t-${agent}`;
    const b = await agentBatch(agent, { batch });
    const tmux = new Tmux(terminalEnv(b.env));
    tmuxes.push(tmux);
    await tmux.start([process.execPath, CLI, '-C', b.repo, 'start', b.planFile, '--yes'], { cwd: b.repo });
    let screen = '';
    let sawAgentScreen = false;
    const closed = () => journal(b.repo, batch).filter((e) => e.event === 'session-closed');
    await until(
      async () => {
        screen = await tmux.capture();
        if (process.env.DEBUG_AGENTS) appendFileSync(`/tmp/i12t-screens-${agent}.txt`, `${screen}\n=====\n`);
        if (AGENT_SCREEN[agent].test(screen)) sawAgentScreen = true;
        return batchState(b.repo, batch) === 'completed' && closed().length === 3;
      },
      'the batch to complete and its sessions to close',
      {
        timeoutMs: 120_000,
        everyMs: 200,
        detail: () => `${JSON.stringify(journal(b.repo, batch).slice(-8))}\n${screen}`,
      },
    );
    const entries = journal(b.repo, batch);
    expect(sawAgentScreen).toBe(true);
    expect(entries.filter((e) => e.event === 'executor-spawned')).toHaveLength(3);
    expect(entries.filter((e) => e.event === 'executor-exited')).toEqual([]);
    expect(entries.filter((e) => e.event === 'turn-ended' && e.task === 'b')).toHaveLength(2);
    expect(entries.filter((e) => e.event === 'rework-sent' && e.task === 'b')).toHaveLength(1);
    const bSession = entries.find((e) => e.event === 'turn-ended' && e.task === 'b')!.session_id as string;
    const carried = b
      .requests()
      .filter((q) => b.sessionOf(q) === bSession && JSON.stringify(q.body).includes(CHECK_OUTPUT));
    expect(carried.length).toBeGreaterThan(0);
    expect(closed().map((e) => e.how)).toEqual(['quit', 'quit', 'quit']);
    for (const id of ['a', 'b', 'c'])
      expect(await git(b.repo, 'show', `batch/${batch}:src/${id}.txt`)).toBe('right');
    expect(agentProcesses(b.home)).toEqual([]);
    await tmux.kill();
  }, 180_000);
});

describe('claude at the QA failure limit', () => {
  it('parks the child with the session open for the human; the fix and `r` finish it', async () => {
    const batch = 'limit';
    const b = await agentBatch('claude', {
      batch,
      ids: ['b'],
      qaFailureLimit: 1,
      script: {
        tasks: [{ match: '# Task b (', turns: [{ actions: [{ write: 'src/b.txt', content: 'wrong\n' }] }] }],
      },
    });
    const tmux = new Tmux(terminalEnv(b.env));
    tmuxes.push(tmux);
    await tmux.start([process.execPath, CLI, '-C', b.repo, 'start', b.planFile, '--yes'], { cwd: b.repo });
    await tmux.waitFor(/^lanes · limit +batch\/limit +needs_human[\s\S]*^› b +needs_human/m, 90_000);
    await until(
      () => journal(b.repo, batch).some((e) => e.event === 'turn-answered'),
      'the waiting turn to be answered',
    );
    expect(journal(b.repo, batch).filter((e) => e.event === 'turn-answered')).toMatchObject([
      { task: 'b', why: 'parked' },
    ]);
    // The agent is still there, at its prompt, in its own session.
    await tmux.waitFor(/│❯/, 10_000);
    expect(journal(b.repo, batch).filter((e) => e.event === 'session-closed')).toEqual([]);
    expect(agentProcesses(b.home).length).toBeGreaterThan(0);

    // The human fixes the lane and resumes the child: QA passes, the session is closed.
    writeFileSync(join(b.repo, '..', 'repo.lanes', batch, 'b', 'src', 'b.txt'), 'right\n');
    await tmux.keys('r');
    await untilCompletedAndClosed(b.repo, batch);
    expect(await git(b.repo, 'show', `batch/${batch}:src/b.txt`)).toBe('right');
    await until(() => agentProcesses(b.home).length === 0, 'no agent process left');
    await tmux.kill();
  }, 180_000);
});

describe('claude waiting for a review', () => {
  it("a rejection is typed into the agent's live session; it reworks, and the approval finishes it", async () => {
    const batch = 'rev';
    const b = await agentBatch('claude', {
      batch,
      ids: ['a'],
      review: true,
      script: {
        tasks: [
          {
            match: '# Task a (',
            turns: [
              { actions: [{ write: 'src/a.txt', content: 'right\n' }] },
              {
                when: 'The reviewer rejected',
                actions: [{ write: 'src/a.txt', content: 'right, reviewed\n' }],
              },
            ],
          },
        ],
      },
    });
    const tmux = new Tmux(terminalEnv(b.env));
    tmuxes.push(tmux);
    await tmux.start([process.execPath, CLI, '-C', b.repo, 'start', b.planFile, '--yes'], { cwd: b.repo });
    await tmux.waitFor(/^› a +enrolled +review/m, 60_000);
    await tmux.keys('x');
    await until(
      () => journal(b.repo, batch).filter((e) => e.event === 'turn-ended').length === 2,
      'the reworked turn to end',
      { timeoutMs: 60_000, detail: () => JSON.stringify(journal(b.repo, batch).slice(-5)) },
    );
    expect(journal(b.repo, batch).filter((e) => e.event === 'rework-sent')).toMatchObject([
      { task: 'a', via: 'typing' },
    ]);
    await tmux.waitFor(/^› a +enrolled +review/m, 60_000);
    await tmux.keys('a');
    await untilCompletedAndClosed(b.repo, batch);
    // One session all along: the rejection reached the same conversation.
    expect(journal(b.repo, batch).filter((e) => e.event === 'executor-spawned')).toHaveLength(1);
    expect(await git(b.repo, 'show', `batch/${batch}:src/a.txt`)).toBe('right, reviewed');
    await until(() => agentProcesses(b.home).length === 0, 'no agent process left');
    await tmux.kill();
  }, 180_000);
});
