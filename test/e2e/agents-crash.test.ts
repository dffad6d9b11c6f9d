import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Script } from '../fixtures/model-server/server.mjs';
import { agentBatch, agentProcesses, batchState, journal } from '../helpers/agent-batch.js';
import { CLI, git, runCli } from '../helpers/repo.js';
import { terminalEnv, Tmux } from '../helpers/tmux.js';
import { until } from '../helpers/until.js';

// kill -9 of the coordinator in the middle of an agent's turn (the real CLI, in the TUI
// under tmux), then `lanes resume`: the lane whose agent went with the coordinator is
// relaunched continuing the same conversation — the same session id reaches the model
// server, with lanes' "continue" instruction — and no child is done twice.

const tmuxes: Tmux[] = [];
afterAll(async () => {
  await Promise.all(tmuxes.map((t) => t.kill()));
});

/** a is mid-turn (a long command) when the coordinator dies; c is done before. */
const SCRIPT: Script = {
  tasks: [
    {
      match: '# Task a (',
      turns: [
        { actions: [{ run: 'sleep 27' }], say: 'Still working.' },
        {
          when: 'lanes restarted',
          actions: [{ write: 'src/a.txt', content: 'right\n' }],
          say: 'Done after the restart.',
        },
      ],
    },
    { match: '# Task c (', turns: [{ actions: [{ write: 'src/c.txt', content: 'right\n' }] }] },
  ],
};

const ALLOW_SLEEP: Record<'claude' | 'codex', string[]> = {
  // The user's own rule for this profile: Claude asks before running a command otherwise.
  claude: ['--permission-mode', 'acceptEdits', '--allowedTools=Bash(sleep:*)'],
  codex: ['-c', 'sandbox_mode="workspace-write"'],
};

function processWith(home: string, text: string): boolean {
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const env = readFileSync(`/proc/${pid}/environ`, 'latin1');
      if (env.includes(`HOME=${home}\0`) && readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes(text))
        return true;
    } catch {
      // gone
    }
  }
  return false;
}

describe.each(['claude', 'codex'] as const)('%s: kill -9 of the coordinator mid-turn', (agent) => {
  it('lanes resume continues the same session; no child is done twice', async () => {
    const batch = `k-${agent}`;
    const b = await agentBatch(agent, { batch, ids: ['a', 'c'], script: SCRIPT });
    const config = JSON.parse(readFileSync(join(b.repo, 'lanes.config.json'), 'utf8')) as {
      executors: Record<string, { argv: string[] }>;
    };
    const program = config.executors[agent]!.argv[0]!;
    const configText = JSON.stringify({
      executors: { [agent]: { agent, argv: [program, ...ALLOW_SLEEP[agent], '{prompt}'] } },
    });
    writeFileSync(join(b.repo, 'lanes.config.json'), configText);
    await git(b.repo, 'commit', '-qam', 'profile');

    const tmux = new Tmux(terminalEnv(b.env));
    tmuxes.push(tmux);
    await tmux.start([process.execPath, CLI, '-C', b.repo, 'start', b.planFile, '--yes'], { cwd: b.repo });
    const kernelOf = (task: string) =>
      JSON.parse(
        readFileSync(join(b.repo, '.git', 'lanes', 'batches', batch, 'tasks', `${task}.json`), 'utf8'),
      ) as {
        attempts: { session_id: string | null }[];
      };
    let screen = '';
    // c integrated, a in the middle of its long command, its session id known.
    await until(
      async () =>
        (screen = await tmux.capture()) &&
        journal(b.repo, batch).some((e) => e.event === 'integrated' && e.task === 'c') &&
        processWith(b.home, 'sleep 27') &&
        kernelOf('a').attempts[0]?.session_id,
      'c integrated and a mid-turn',
      {
        timeoutMs: 90_000,
        everyMs: 200,
        detail: () => JSON.stringify(journal(b.repo, batch).slice(-6)) + screen,
      },
    );
    const session = kernelOf('a').attempts[0]!.session_id!;
    const holder = JSON.parse(
      readFileSync(join(b.repo, '.git', 'lanes', 'locks', `${batch}.holder.json`), 'utf8'),
    ) as { pid: number };
    process.kill(holder.pid, 'SIGKILL');
    // (Codex may first wait for the command it runs, up to its 27 s: the bound leaves room for
    // that on a loaded machine; the wait ends as soon as the agent is gone)
    await until(() => agentProcesses(b.home).length === 0, 'the agent to go with its terminal', {
      timeoutMs: 75_000,
    });
    expect(batchState(b.repo, batch)).toBe('running');

    const r = await runCli(['-C', b.repo, 'resume', batch, '--headless'], { env: b.env });
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(batchState(b.repo, batch)).toBe('completed');
    const entries = journal(b.repo, batch);
    const aSpawns = entries.filter((e) => e.event === 'executor-spawned' && e.task === 'a');
    expect(aSpawns).toHaveLength(2);
    expect(aSpawns[1]).toMatchObject({ resumed: true, session_id: session });
    // The relaunched agent's requests carry the same session id and lanes' instruction to go on.
    const continued = b
      .requests()
      .filter((q) => b.sessionOf(q) === session && JSON.stringify(q.body).includes('lanes restarted'));
    expect(continued.length).toBeGreaterThan(0);
    // No child done twice: c ran once and was integrated once; each child has one commit on the batch branch.
    expect(entries.filter((e) => e.event === 'executor-spawned' && e.task === 'c')).toHaveLength(1);
    expect(
      entries
        .filter((e) => e.event === 'integrated')
        .map((e) => e.task)
        .sort(),
    ).toEqual(['a', 'c']);
    const log = await git(b.repo, 'log', '--format=%s', `main..batch/${batch}`);
    expect(log.split('\n')).toHaveLength(2);
    for (const id of ['a', 'c'])
      expect(await git(b.repo, 'show', `batch/${batch}:src/${id}.txt`)).toBe('right');
    expect(agentProcesses(b.home)).toEqual([]);
    await tmux.kill();
  }, 180_000);
});
