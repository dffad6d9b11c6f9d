import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Script } from '../fixtures/model-server/server.mjs';
import { agentBatch, agentProcesses, untilCompletedAndClosed, journal } from '../helpers/agent-batch.js';
import { CLI, git, tempDir } from '../helpers/repo.js';
import { terminalEnv, Tmux } from '../helpers/tmux.js';
import { until } from '../helpers/until.js';

// The user's permissions stay the user's: the real agent asks before it writes (Claude's
// default mode; a Codex command outside its sandbox), lanes shows the lane `waiting` and
// rings once, never answers; the human attaches and answers, and the batch finishes.

const tmuxes: Tmux[] = [];
afterAll(async () => {
  await Promise.all(tmuxes.map((t) => t.kill()));
});

const CASES = {
  claude: {
    argv: (program: string) => [program, '{prompt}'], // default permission mode: Write asks
    script: {
      tasks: [{ match: '# Task a (', turns: [{ actions: [{ write: 'src/a.txt', content: 'right\n' }] }] }],
    },
    prompt: /│.*Do you want to create a\.txt\?/,
    answer: 'Enter',
  },
  codex: {
    argv: (program: string) => [program, '-c', 'sandbox_mode="workspace-write"', '{prompt}'],
    script: {
      tasks: [
        {
          match: '# Task a (',
          turns: [{ actions: [{ run: "printf 'right\\n' > src/a.txt", escalate: true }] }],
        },
      ],
    },
    prompt: /│.*Would you like to run the following command\?/,
    answer: 'y',
  },
} satisfies Record<string, { argv: (p: string) => string[]; script: Script; prompt: RegExp; answer: string }>;

describe.each(['claude', 'codex'] as const)('%s asks for permission', (agent) => {
  it('the lane shows waiting and rings once; the answer typed after attach lets it finish', async () => {
    const batch = `p-${agent}`;
    const c = CASES[agent];
    const b = await agentBatch(agent, { batch, ids: ['a'], script: c.script });
    const configPath = join(b.repo, 'lanes.config.json');
    const config = JSON.parse(readFileSync(configPath, 'utf8')) as {
      executors: Record<string, { argv: string[] }>;
    };
    const program = config.executors[agent]!.argv[0]!;
    writeFileSync(configPath, JSON.stringify({ executors: { [agent]: { agent, argv: c.argv(program) } } }));
    await git(b.repo, 'commit', '-qam', 'profile asks');

    const tmux = new Tmux(terminalEnv(b.env));
    tmuxes.push(tmux);
    const raw = join(tempDir('lanes-tty-'), 'out');
    await tmux.start([process.execPath, CLI, '-C', b.repo, 'start', b.planFile, '--yes'], { cwd: b.repo });
    await tmux.run('pipe-pane', '-o', '-t', 'main', `cat >> '${raw}'`);
    const rings = () =>
      existsSync(raw) ? readFileSync(raw, 'latin1').split('\x1b]9;lanes: a waits for input').length - 1 : 0;

    await tmux.waitFor(/^› a +enrolled +waiting/m, 60_000);
    // The agent's own question, in its pane (its screen is parsed beside the loop: it may
    // come a frame after the row's state), the lane still waiting.
    let screen = await tmux.waitFor(c.prompt, 10_000);
    expect(screen).toMatch(/^› a +enrolled +waiting/m);
    await until(() => rings() === 1, 'one notification');
    expect(journal(b.repo, batch).some((e) => e.event === 'turn-ended')).toBe(false); // nothing answered it

    await tmux.keys('Enter'); // attach the selected lane
    await tmux.waitFor(/│a · attached \(ctrl-g detaches\)/, 10_000);
    await tmux.keys(c.answer);
    await untilCompletedAndClosed(b.repo, batch);
    expect(rings()).toBe(1);
    expect(await git(b.repo, 'show', `batch/${batch}:src/a.txt`)).toBe('right');
    screen = await tmux.capture();
    expect(agentProcesses(b.home)).toEqual([]);
    await tmux.kill();
  }, 180_000);
});
