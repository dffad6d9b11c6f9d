import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Script } from '../fixtures/model-server/server.mjs';
import { agentBatch } from '../helpers/agent-batch.js';
import { claudeBin } from '../helpers/agents.js';
import { git, makeRepo, runCli, snapshotTree, tempDir } from '../helpers/repo.js';

// `lanes plan draft` (issue 27) with the pinned Claude Code and Codex against the scripted
// model server: its first plan has a dependency cycle and an unknown field; lanes' findings
// reach it in the same session (seen in the requests the server receives), its second plan
// passes and is written, and the work tree is as it was. A server that never mends its plan
// ends with the problems listed, exit 2, nothing written.

const GOAL = 'greet the world in two files';
const good = `batch: greet
executor: script
children:
  - id: hello
    goal: Write hello.txt
    scope: ['hello.txt']
    acceptance:
      - { id: says-hello, run: 'grep -q hello hello.txt' }
    run: 'echo hello > hello.txt'
  - id: bye
    goal: Write bye.txt
    scope: ['bye.txt']
    acceptance:
      - { id: says-bye, run: 'grep -q bye bye.txt' }
    run: 'echo bye > bye.txt'
`;
const bad = good
  .replace('  - id: hello\n', '  - id: hello\n    colour: blue\n    blocked_by: [bye]\n')
  .replace('  - id: bye\n', '  - id: bye\n    blocked_by: [hello]\n');
const fence = (text: string) => `Here is the plan.\n\n\`\`\`yaml\n${text}\`\`\`\n`;

function script(mends: boolean): Script {
  return {
    tasks: [
      {
        match: `# Goal: ${GOAL}`,
        turns: [{ say: fence(bad) }, ...(mends ? [{ when: 'dependency cycle: ', say: fence(good) }] : [])],
      },
    ],
  };
}

describe.each(['claude', 'codex'] as const)('lanes plan draft with %s', (agent) => {
  it('sends the problems back into the same session until the plan passes, then writes it', async () => {
    const b = await agentBatch(agent, { batch: `d-${agent}`, script: script(true) });
    const out = join(tempDir('lanes-draft-'), 'greet.yaml');
    const before = await git(b.repo, 'status', '--porcelain', '--untracked-files=all');
    const r = await runCli(['-C', b.repo, 'plan', 'draft', GOAL, '--executor', agent, '-o', out], {
      env: b.env,
    });
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(good);
    expect(r.stdout).toContain('wave 1: hello (script), bye (script)');
    expect(r.stderr).toContain('round 2 of 3');
    // The findings reached the agent in the session of the first plan.
    const requests = b.requests().filter((q) => b.sessionOf(q));
    const sessions = new Set(requests.map((q) => b.sessionOf(q)));
    expect(sessions.size).toBe(1);
    const told = requests.filter((q) => JSON.stringify(q.body).includes('lanes checked your plan'));
    expect(told.length).toBeGreaterThan(0);
    const body = JSON.stringify(told[0]!.body);
    expect(body).toContain('dependency cycle');
    expect(body).toContain('colour');
    expect(await git(b.repo, 'status', '--porcelain', '--untracked-files=all')).toBe(before);
  }, 120_000);

  it('a plan never mended: the problems listed, exit 2, nothing written', async () => {
    const b = await agentBatch(agent, { batch: `n-${agent}`, script: script(false) });
    const out = join(tempDir('lanes-draft-'), 'greet.yaml');
    const r = await runCli(
      ['-C', b.repo, 'plan', 'draft', GOAL, '--executor', agent, '-o', out, '--rounds', '2'],
      {
        env: b.env,
      },
    );
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(2);
    expect(r.stderr).toContain('still has problems after 2 rounds (nothing written)');
    expect(r.stderr).toMatch(/dependency cycle: /);
    expect(r.stderr).toContain('colour');
    expect(existsSync(out)).toBe(false);
  }, 120_000);

  it('the agent itself fails (its model server answers 404): exit 4, its error said, nothing written', async () => {
    const b = await agentBatch(agent, { batch: `f-${agent}`, script: script(true) });
    const env = { ...b.env };
    if (agent === 'claude') env.ANTHROPIC_BASE_URL = `${b.server.url}/nowhere`;
    else {
      const config = join(b.home, 'config.toml');
      writeFileSync(
        config,
        readFileSync(config, 'utf8').replace(`${b.server.url}/v1`, `${b.server.url}/nowhere/v1`),
      );
    }
    const out = join(tempDir('lanes-draft-'), 'greet.yaml');
    const r = await runCli(['-C', b.repo, 'plan', 'draft', GOAL, '--executor', agent, '-o', out], { env });
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(4);
    // What the agent said of its failure, not a plan check of its error message, and no second round.
    expect(r.stderr).toMatch(
      agent === 'claude' ? /claude failed: .*selected model/ : /codex failed: .*404 Not Found/,
    );
    expect(r.stderr).not.toContain('still has problems');
    expect(r.stderr).not.toContain('round 2');
    expect(existsSync(out)).toBe(false);
  }, 120_000);
});

it('an agent that changed the work tree (a wrapper of Claude Code writing a file): exit 4, nothing written', async () => {
  const b = await agentBatch('claude', { batch: 't-claude', script: script(true) });
  const wrapper = join(tempDir('lanes-wrapper-'), 'claude');
  writeFileSync(wrapper, `#!/bin/sh\necho stray > stray.txt\nexec '${claudeBin()}' "$@"\n`);
  chmodSync(wrapper, 0o755);
  writeFileSync(
    join(b.repo, 'lanes.config.json'),
    `${JSON.stringify({ executors: { claude: { agent: 'claude', argv: [wrapper, '{prompt}'] } } }, null, 2)}\n`,
  );
  await git(b.repo, 'commit', '-qam', 'a wrapper');
  const out = join(tempDir('lanes-draft-'), 'greet.yaml');
  const r = await runCli(['-C', b.repo, 'plan', 'draft', GOAL, '-o', out], { env: b.env });
  expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(4);
  expect(r.stderr).toContain('claude changed the work tree (nothing written)');
  expect(existsSync(out)).toBe(false);
}, 120_000);

describe('lanes plan draft: bad input is exit 2, says what is wrong, writes nothing', () => {
  it.each([
    [[], /usage: lanes plan draft "<goal>"/],
    [[GOAL, '-o', 'plan.txt'], /-o names a \.yaml or \.yml file/],
    [[GOAL, '--rounds', '0'], /--rounds expects a whole number > 0, got "0"/],
    [[GOAL, '--executor', 'command'], /--executor command is not an agent with a read-only mode/],
    [[GOAL, '--executor', 'nosuch'], /--executor nosuch is not an agent with a read-only mode/],
    [[GOAL, '-o', 'README.yaml'], /README\.yaml already there \(nothing written\)/],
  ])('plan draft %j', async (args, message) => {
    const repo = await makeRepo({ 'README.md': '# test\n', 'README.yaml': 'kept: true\n' });
    const before = snapshotTree(repo);
    const r = await runCli(['-C', repo, 'plan', 'draft', ...args]);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe('');
    expect(snapshotTree(repo)).toEqual(before);
  });
});
