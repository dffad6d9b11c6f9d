import {
  chmodSync,
  copyFileSync,
  existsSync,
  linkSync,
  readFileSync,
  realpathSync,
  readdirSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startModelServer } from '../../fixtures/model-server/server.mjs';
import type { ModelServer, Script } from '../../fixtures/model-server/server.mjs';
import { batchState, journal } from '../../helpers/agent-batch.js';
import { claudeBin } from '../../helpers/agents.js';
import { CLI, git, tempDir } from '../../helpers/repo.js';
import { terminalEnv, Tmux } from '../../helpers/tmux.js';
import { until } from '../../helpers/until.js';
import { machineRepoPath, repoId } from '../../../src/machines/protocol.js';
import { processesOf, type SshMachine, type SshMachines, startSshMachines } from '../../helpers/sshd.js';
import { leanRepo, lanesProcess, readRecord, worktreePaths, writePlan } from '../reliability/support.js';

// The pinned Claude Code as the executor of lanes on a machine of real OpenSSH
// (test/helpers/sshd.ts), against the scripted model server on 127.0.0.1 (which the
// machine's user reaches as any local client does). The machine's user cannot read the
// pinned install under root's home, so the test hard-links the one executable into a folder
// of its own that every user may read (0755, no chmod of anything of root's), and the
// executor profile names it there. The agent's HOME is the machine user's own home. Each
// check runs on the machine and wants the file owned by that machine's user. Run
// `npm run -s build` first.
//
// Headless, each turn ends with its process's exit (the session's status comes back with the
// machine host's poll). In the TUI, Claude Code runs interactive on the machine: its Stop hook
// (`node <root>/machine.js hook claude-stop`) tells the coordinator through the hook socket
// forwarded to `<root>/sock/<batch>.sock`, waits there for QA, and b's failing check comes
// back as the hook's answer into the same session.

const TEST_API_KEY = 'sk-lanes-test';

/** The pinned Claude Code, hard-linked (same inode, its own 0755 mode) where a machine's user can run it. */
function sharedClaude(): string {
  const dir = tempDir('lanes-agent-shared-');
  chmodSync(dir, 0o755);
  const target = join(dir, 'claude');
  const source = realpathSync(claudeBin()); // (.bin/claude is a relative link)
  try {
    linkSync(source, target);
  } catch {
    // (another filesystem: a copy, made once a test file)
    copyFileSync(source, target);
    chmodSync(target, 0o755);
  }
  expect(statSync(target).mode & 0o005).toBe(0o005);
  return target;
}

/** The machine user's Claude Code config: onboarding done, the test key approved, `trust` folders trusted. */
async function claudeHome(machine: SshMachine, trust: string[]): Promise<void> {
  const projects = Object.fromEntries(trust.map((dir) => [dir, { hasTrustDialogAccepted: true }]));
  const config = join(machine.home, '.claude.json');
  writeFileSync(
    config,
    `${JSON.stringify({
      hasCompletedOnboarding: true,
      customApiKeyResponses: { approved: [TEST_API_KEY.slice(-20)], rejected: [] },
      projects,
    })}\n`,
    { mode: 0o600 },
  );
  await execa('chown', [`${machine.user}:${machine.user}`, config]);
}

/** a writes "right"; b writes "wrong" first and "right" only when told the check's output. */
function script(): Script {
  return {
    tasks: [
      {
        match: '# Task a (',
        turns: [{ actions: [{ write: 'src/a.txt', content: 'right\n' }], say: 'The task is done.' }],
      },
      {
        match: '# Task b (',
        turns: [
          { actions: [{ write: 'src/b.txt', content: 'wrong\n' }], say: 'The task is done.' },
          {
            when: 'expected right in src/b.txt',
            actions: [{ write: 'src/b.txt', content: 'right\n' }],
            say: 'Fixed.',
          },
        ],
      },
    ],
  };
}

interface AgentRun {
  repo: string;
  plan: string;
  requests: () => string;
}

const BATCH_IDS = ['a', 'b'];

describe('Claude Code on a machine', () => {
  let fixture: SshMachines;
  let claude: string;
  const servers: ModelServer[] = [];
  const tmuxes: Tmux[] = [];
  beforeAll(async () => {
    fixture = await startSshMachines(1);
    claude = sharedClaude();
  }, 60_000);
  afterAll(async () => {
    await Promise.all(tmuxes.map((t) => t.kill()));
    await Promise.all(servers.map((s) => s.close()));
    await fixture?.close();
  }, 30_000);

  /** A repository whose one machine runs the shared Claude Code against a model server of its own, and a plan of a and b. */
  async function agentRun(batch: string): Promise<AgentRun> {
    const machine = fixture.machines[0]!;
    const logFile = join(tempDir('lanes-model-log-'), 'requests.jsonl');
    const server = await startModelServer({ logFile, script: script() });
    servers.push(server);
    const repo = await leanRepo({ 'README.md': '# test\n', 'src/.keep': '' });
    // (interactive, Claude Code asks to trust a folder it has not been told of: the lanes there are trusted)
    const root = join(machine.home, '.cache', 'lanes');
    const id = repoId(realpathSync(repo));
    await claudeHome(machine, [
      machineRepoPath(root, id),
      ...BATCH_IDS.map((c) => `${root}/lanes/${machine.name}/${id}/${batch}/${c}`),
    ]);
    writeFileSync(
      join(repo, 'lanes.config.json'),
      `${JSON.stringify({
        machines: [{ name: machine.name, ssh: machine.name, slots: 2 }],
        ssh_command: fixture.sshCommand,
        executors: {
          claude: {
            agent: 'claude',
            argv: [claude, '--permission-mode', 'acceptEdits', '{prompt}'],
            env: {
              ANTHROPIC_BASE_URL: server.url,
              ANTHROPIC_API_KEY: TEST_API_KEY,
              CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
              TERM: 'xterm-256color',
            },
          },
        },
      })}\n`,
    );
    await git(repo, 'add', '-A');
    await git(repo, 'commit', '-q', '-m', 'lanes config');
    const plan = writePlan({
      batch,
      executor: 'claude',
      max_parallel: 2,
      children: BATCH_IDS.map((c) => ({
        id: c,
        goal: `write src/${c}.txt`,
        scope: [`src/${c}.txt`],
        acceptance: [
          {
            id: 'right',
            // (on the machine: the file is its user's, written by the agent there)
            run: `test "$(stat -c %U src/${c}.txt)" = ${machine.user} && grep -q right src/${c}.txt || { echo "expected right" "in src/${c}.txt, got: $(cat src/${c}.txt 2>&1)"; exit 1; }`,
          },
        ],
      })),
    });
    return { repo, plan, requests: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '') };
  }

  /** What both modes show: on the machine, as its user, b reworked in its session, both integrated, nothing left. */
  async function expectDoneOnMachine(run: AgentRun, batch: string): Promise<void> {
    const machine = fixture.machines[0]!;
    const { repo } = run;
    const record = readRecord(repo, batch)!;
    expect(record.batch_state).toBe('completed');
    for (const child of record.children) {
      expect((child as { machine?: string }).machine, child.task_id).toBe(machine.name);
      expect(child.lane?.path ?? '', child.task_id).toContain(`${machine.home}/.cache/lanes/lanes/`);
    }
    const entries = journal(repo, batch);
    const spawned = entries.filter((e) => e.event === 'executor-spawned');
    expect(spawned.every((e) => e.host === 'machine')).toBe(true);
    expect(entries.filter((e) => e.event === 'qa-failed' && e.task === 'b')).toHaveLength(1);
    expect(run.requests()).toContain('expected right in src/b.txt');
    for (const id of BATCH_IDS) expect(await git(repo, 'show', `batch/${batch}:src/${id}.txt`)).toBe('right');
    // Claude Code ran as the machine's user: its sessions are in that user's home.
    const projects = join(machine.home, '.claude', 'projects');
    const sessions = readdirSync(projects).flatMap((d) => readdirSync(join(projects, d)));
    const bSession = String(spawned.find((e) => e.task === 'b')!.session_id);
    expect(sessions).toContain(`${bSession}.jsonl`);
    expect(await worktreePaths(repo)).toEqual([repo]);
    expect(existsSync(join(repo, '.git', 'worktrees'))).toBe(false);
    const tmux = await execa('tmux', ['-L', 'lanes', 'list-sessions'], {
      reject: false,
      env: { TMUX_TMPDIR: '/tmp' },
      uid: machine.uid,
    });
    expect(String(tmux.stdout).trim()).toBe('');
    await until(async () => (await processesOf(machine.user)).length === 0, `no process of ${machine.user}`, {
      timeoutMs: 10_000,
      everyMs: 100,
    });
  }

  it('headless: the turns end on the machine, b reworked in its session there, and both integrate', async () => {
    const batch = 'agent';
    const run = await agentRun(batch);
    const r = await lanesProcess(['-C', run.repo, 'start', run.plan, '--yes', '--headless']);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    const bSpawns = journal(run.repo, batch).filter((e) => e.event === 'executor-spawned' && e.task === 'b');
    expect(bSpawns).toHaveLength(2);
    expect(bSpawns[1]!.resumed).toBe(true);
    expect(bSpawns[1]!.session_id).toBe(bSpawns[0]!.session_id);
    await expectDoneOnMachine(run, batch);
  }, 180_000);

  it("in the TUI: the Stop hook on the machine ends each turn through the forwarded socket; b's check comes back into its session", async () => {
    const batch = 'live';
    const run = await agentRun(batch);
    const tmux = new Tmux(terminalEnv());
    tmuxes.push(tmux);
    await tmux.start([process.execPath, CLI, '-C', run.repo, 'start', run.plan, '--yes'], { cwd: run.repo });
    let screen = '';
    const closed = () => journal(run.repo, batch).filter((e) => e.event === 'session-closed');
    // The forwarded hook socket on the machine, in its 0700 folder, while the agents run.
    const sock = join(fixture.machines[0]!.home, '.cache', 'lanes', 'sock');
    let socketSeen = false;
    await until(
      async () => {
        screen = await tmux.capture();
        if (/EXIT=\d+/.test(screen)) throw new Error(`lanes ended before the batch completed:\n${screen}`);
        if (!socketSeen && existsSync(join(sock, `${batch}.sock`))) {
          expect(statSync(join(sock, `${batch}.sock`)).isSocket()).toBe(true);
          expect(statSync(sock).mode & 0o777).toBe(0o700);
          socketSeen = true;
        }
        return batchState(run.repo, batch) === 'completed' && closed().length === 2;
      },
      'the batch to complete and its sessions to close',
      {
        timeoutMs: 150_000,
        everyMs: 250,
        detail: () => `${JSON.stringify(journal(run.repo, batch).slice(-8))}\n${screen}`,
      },
    );
    const entries = journal(run.repo, batch);
    // One attempt each: the turns ended by the hook (no exit), b's rework sent as its answer.
    expect(entries.filter((e) => e.event === 'executor-spawned')).toHaveLength(2);
    expect(entries.filter((e) => e.event === 'executor-exited')).toEqual([]);
    expect(entries.filter((e) => e.event === 'turn-ended' && e.task === 'a')).toHaveLength(1);
    expect(entries.filter((e) => e.event === 'turn-ended' && e.task === 'b')).toHaveLength(2);
    expect(entries.filter((e) => e.event === 'rework-sent' && e.task === 'b')).toHaveLength(1);
    expect(closed().map((e) => e.how)).toEqual(['quit', 'quit']);
    expect(socketSeen).toBe(true);
    await tmux.keys('q');
    await tmux.waitFor(/EXIT=\d+/, 30_000);
    await expectDoneOnMachine(run, batch);
  }, 240_000);
});
