import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { git, snapshotTree } from '../helpers/repo.js';
import { copyRepo, lanesInProcess, lanesProcess, leanRepo, writePlan } from './reliability/support.js';
import { tempDir } from '../helpers/repo.js';

// Executor preferences end to end: what `lanes start` shows on its confirmation (each value
// with its source), what the executor is really started with (its argv, written by a real
// process into the lane and integrated), what a resume starts it with, and the refusals
// (bad directives, a missing program): exit 2, nothing written.

/** A profile whose program writes the arguments it got, one a line, into f/<task>.txt. */
const DUMP = {
  argv: [
    'sh',
    '-c',
    'mkdir -p f && printf "%s\\n" "$@" > "f/$LANES_TASK.txt"',
    'dump',
    '--model',
    '{model}',
    '--effort',
    '{effort}',
    '--mode',
    '{permission_mode}',
  ],
  permission_mode: 'plan',
};

const child = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  goal: `write f/${id}.txt`,
  scope: [`f/${id}.txt`],
  acceptance: [{ id: 'exists', run: ['test', '-f', `f/${id}.txt`] }],
  ...extra,
});

let template: string;
beforeAll(async () => {
  template = await leanRepo();
});

function repoWith(files: Record<string, string>): string {
  const repo = copyRepo(template);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(repo, name), text);
  return repo;
}

const argsOf = async (repo: string, batch: string, task: string) =>
  (await git(repo, 'show', `batch/${batch}:f/${task}.txt`)).split('\n');

describe('each value with its source, and the executor started with those values', () => {
  it('takes executor, model and max_parallel from AGENTS.md, effort from the plan, the mode from the config', async () => {
    const repo = repoWith({
      'lanes.config.json': JSON.stringify({ executors: { dump: DUMP } }),
      'AGENTS.md':
        '# Agents\nLane executor: dump\nLane executor model: m-agents\n- **Lane max parallel:** 1\n',
    });
    const plan = join(repo, '..', 'p.json');
    writeFileSync(
      plan,
      JSON.stringify({
        batch: 'b1',
        children: [child('A', { effort: 'high' }), child('B', { model: 'm-plan' })],
      }),
    );
    const r = await lanesInProcess(['-C', repo, 'start', plan, '--yes', '--headless']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain('max_parallel 1 (AGENTS.md:4)');
    expect(r.stderr).toContain(
      'A: executor dump (AGENTS.md:2), model m-agents (AGENTS.md:3), effort high (plan), permission mode plan (config executors.dump)',
    );
    expect(r.stderr).toContain(
      'B: executor dump (AGENTS.md:2), model m-plan (plan), permission mode plan (config executors.dump)',
    );
    expect(await argsOf(repo, 'b1', 'A')).toEqual([
      '--model',
      'm-agents',
      '--effort',
      'high',
      '--mode',
      'plan',
    ]);
    // B has no effort: "--effort {effort}" is left out as a pair, not passed as "".
    expect(await argsOf(repo, 'b1', 'B')).toEqual(['--model', 'm-plan', '--mode', 'plan']);
  }, 60_000);

  it('lets the command line win, keeps its values for a resume, and drops an AGENTS.md model meant for another executor', async () => {
    const repo = repoWith({
      'lanes.config.json': JSON.stringify({ executors: { dump: DUMP } }),
      'CLAUDE.md': 'Lane executor: claude\nLane executor model: opus\n',
    });
    const plan = writePlan({ batch: 'b2', children: [child('A')] });
    const started = await lanesInProcess([
      '-C',
      repo,
      'start',
      plan,
      '--yes',
      '--headless',
      '--no-run',
      '--executor',
      'dump',
      '--effort',
      'low',
    ]);
    expect(started.exitCode, started.stderr).toBe(0);
    expect(started.stderr).toContain(
      'executor dump (command line), effort low (command line), permission mode plan',
    );
    expect(started.stderr).toContain('model opus (CLAUDE.md:2) not used: executor dump is from command line');
    // The resume has no command line: the confirmed plan holds what was confirmed.
    const resumed = await lanesInProcess(['-C', repo, 'resume', 'b2', '--headless']);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(await argsOf(repo, 'b2', 'A')).toEqual(['--effort', 'low', '--mode', 'plan']);
  }, 60_000);

  it('passes --model over the plan', async () => {
    const repo = repoWith({ 'lanes.config.json': JSON.stringify({ executors: { dump: DUMP } }) });
    const plan = writePlan({ batch: 'b3', executor: 'dump', children: [child('A')] });
    const r = await lanesInProcess(['-C', repo, 'start', plan, '--yes', '--headless', '--model', 'm-cli']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain('executor dump (plan), model m-cli (command line)');
    expect(await argsOf(repo, 'b3', 'A')).toEqual(['--model', 'm-cli', '--mode', 'plan']);
  }, 60_000);
});

describe('the built-in claude and codex profiles', () => {
  it('start the program found on PATH with the flags of the values that are set, and no others', async () => {
    // Stand-ins named claude and codex that write their arguments down (the real agents'
    // runs are the fixtures' tests); what is checked here is the argv lanes builds.
    const bin = tempDir('lanes-bin-');
    for (const name of ['claude', 'codex']) {
      // (NUL-separated: the prompt has lines of its own)
      writeFileSync(join(bin, name), '#!/bin/sh\nmkdir -p f && printf "%s\\0" "$@" > "f/$LANES_TASK.txt"\n');
      chmodSync(join(bin, name), 0o755);
    }
    const repo = repoWith({
      'lanes.config.json': JSON.stringify({
        executors: { codex: { permission_mode: 'workspace-write', approval_policy: 'on-request' } },
      }),
    });
    const plan = writePlan({
      batch: 'b1',
      children: [
        child('A', { executor: 'claude', model: 'opus' }),
        child('B', { executor: 'codex', effort: 'low' }),
      ],
    });
    const r = await lanesProcess(['-C', repo, 'start', plan, '--yes', '--headless'], {
      PATH: `${bin}:${process.env.PATH ?? ''}`,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    const nulArgs = async (task: string) =>
      (await git(repo, 'show', `batch/b1:f/${task}.txt`)).split('\0').slice(0, -1);
    // Headless, each agent's adapter puts its own mode first (src/agents): Claude's print
    // mode with a session id of lanes' choosing, Codex's exec with JSON events.
    const a = await nulArgs('A');
    expect(a.slice(0, 5)).toEqual(['-p', '--output-format', 'stream-json', '--verbose', '--session-id']);
    expect(a[5]).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.slice(6, 8)).toEqual(['--model', 'opus']);
    expect(a[8]).toMatch(/^# Task A /); // the prompt, one argument; no --effort, no --permission-mode
    expect(a).toHaveLength(9);
    const b = await nulArgs('B');
    expect(b.slice(0, 8)).toEqual([
      'exec',
      '--json',
      '-c',
      'model_reasoning_effort="low"',
      '--sandbox',
      'workspace-write',
      '-c',
      'approval_policy="on-request"',
    ]);
    expect(b[8]).toMatch(/^# Task B /);
    expect(b).toHaveLength(9);
    for (const argv of [a, b]) expect(argv.join(' ')).not.toMatch(/dangerously|bypass/);
  }, 60_000);
});

/** Runs each command: exit 2, the fragment on stderr, nothing on stdout, .git byte for byte the same. */
async function refused(repo: string, commands: string[][], fragment: string): Promise<void> {
  const before = snapshotTree(join(repo, '.git'));
  for (const args of commands) {
    const r = await lanesInProcess(['-C', repo, ...args]);
    expect(r.stderr, args.join(' ')).toContain(fragment);
    expect(r.stdout, args.join(' ')).toBe('');
    expect(r.exitCode, args.join(' ')).toBe(2);
    expect(snapshotTree(join(repo, '.git')), args.join(' ')).toEqual(before);
  }
}

describe('refused at confirmation: exit 2, nothing written', () => {
  it.each([
    [
      'AGENTS.md',
      'Lane executor effort: hgih\n',
      'AGENTS.md:1: "Lane executor effort: hgih": must be one of',
    ],
    [
      'AGENTS.md',
      '\nLane max parallel: 0\n',
      'AGENTS.md:2: "Lane max parallel: 0": must be a whole number > 0',
    ],
    [
      'CLAUDE.md',
      'Lane executor model: two words\n',
      'CLAUDE.md:1: "Lane executor model: two words": must be a model name',
    ],
    ['AGENTS.md', 'Lane executor: nope\n', 'AGENTS.md:1: unknown executor profile "nope"'],
  ])('%s with %j', async (file, text, fragment) => {
    const repo = repoWith({ [file]: text });
    const plan = writePlan({ batch: 'b1', executor: 'script', children: [{ ...child('A'), run: 'true' }] });
    await refused(
      repo,
      [
        ['plan', 'check', plan],
        ['start', plan, '--yes', '--headless'],
        ['start', plan, '--yes', '--headless', '--no-run'],
      ],
      fragment,
    );
  });

  it('AGENTS.md and CLAUDE.md that disagree', async () => {
    const repo = repoWith({ 'AGENTS.md': 'Lane executor: script\n', 'CLAUDE.md': 'Lane executor: claude\n' });
    const plan = writePlan({ batch: 'b1', children: [{ ...child('A'), run: 'true' }] });
    await refused(
      repo,
      [['start', plan, '--yes', '--headless']],
      'CLAUDE.md:1: Lane executor is "claude" here but "script" at AGENTS.md:1',
    );
  });

  it('an executor whose program is a path that is not executable, and one not on PATH, in any child', async () => {
    const repo = repoWith({
      'lanes.config.json': JSON.stringify({
        executors: {
          mine: { argv: ['./bin/agent', '{prompt}'] },
          gone: { argv: ['lanes-no-such-agent', '--model', '{model}'] },
        },
      }),
    });
    mkdirSync(join(repo, 'bin'));
    writeFileSync(join(repo, 'bin', 'agent'), '#!/bin/sh\nexit 0\n'); // (not executable)
    const plan = writePlan({
      batch: 'b1',
      executor: 'script',
      children: [
        { ...child('A'), run: 'true' },
        { ...child('B'), executor: 'mine' },
        { ...child('C'), executor: 'gone' },
      ],
    });
    await refused(
      repo,
      [['start', plan, '--yes', '--headless']],
      'executor profile "mine" runs "./bin/agent", which is not an executable file (child B)',
    );
    await refused(
      repo,
      [['start', plan, '--yes', '--headless']],
      'executor profile "gone" runs "lanes-no-such-agent", which is not on PATH (child C)',
    );
    // Once it is executable, only the other one is refused.
    chmodSync(join(repo, 'bin', 'agent'), 0o755);
    const r = await lanesInProcess(['-C', repo, 'start', plan, '--yes', '--headless']);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).not.toContain('"mine"');
  });
});
