import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { shellCommand } from '../../src/agents/agent.js';
import type { AgentLaunchInput } from '../../src/agents/agent.js';
import { AGENTS, agentOf, hookKinds, hookOf, registryProblems } from '../../src/agents/agents.js';
import { claudeAgent } from '../../src/agents/claude.js';
import { codexAgent, codexHooks } from '../../src/agents/codex.js';
import { commandAgent } from '../../src/agents/command.js';
import { AGENT_NAMES } from '../../src/core/basics/agent-names.js';
import { BUILTIN_PROFILES } from '../../src/core/settings/config.js';

// What each agent adapter launches and how it reads the agent's output: pure, no process.

const input = (patch: Partial<AgentLaunchInput> = {}): AgentLaunchInput => ({
  argv: ['claude', '--model', 'm', 'do the task'],
  promptIndex: 3,
  mode: 'interactive',
  resumeSessionId: null,
  newSessionId: 'new-id',
  hookArgv: ['/usr/bin/node', '/opt/lanes/main.js', 'hook'],
  lanePath: '/lanes/a',
  ...patch,
});

describe('profiles and adapters', () => {
  it('the built-in claude and codex profiles use their adapters; any other command is a command', () => {
    expect(agentOf(BUILTIN_PROFILES.claude!).name).toBe('claude');
    expect(agentOf(BUILTIN_PROFILES.codex!).name).toBe('codex');
    expect(agentOf(BUILTIN_PROFILES.script!).name).toBe('command');
    expect(commandAgent.launch(input()).argv).toEqual(input().argv);
  });

  it('quotes every argument of a hook command for the shell', () => {
    expect(shellCommand(['/a b/node', "it's"])).toBe(`'/a b/node' 'it'\\''s'`);
  });
});

describe('the registry', () => {
  it("holds exactly the core's agent names, each under its own name, no hook kind twice", () => {
    expect(Object.keys(AGENTS)).toEqual([...AGENT_NAMES]);
    expect(registryProblems(AGENTS)).toEqual([]);
    expect(hookKinds()).toEqual(['claude-stop', 'claude-notification', 'codex-stop', 'codex-session']);
  });

  it('finds a hook by its kind, and nothing for a kind no agent has', () => {
    expect(hookOf('codex-session')).toMatchObject({ agent: { name: 'codex' }, hook: { event: 'session' } });
    expect(hookOf('claude-notification')?.hook.event).toBe('notification');
    expect(hookOf('gemini-stop')).toBeNull();
    expect(hookOf('toString')).toBeNull();
  });

  it('names what is wrong with a registry (the check can fail)', () => {
    expect(registryProblems({ claude: codexAgent, codex: { ...codexAgent, name: 'codex' } })).toEqual([
      'agent "codex" is registered as "claude"',
      'hook kind "codex-stop" belongs to both codex and codex',
      'hook kind "codex-session" belongs to both codex and codex',
    ]);
  });

  it('each agent installs exactly the hooks it declares (the argv and the kinds come from its file)', () => {
    for (const agent of Object.values(AGENTS)) {
      const argv = agent.launch(input()).argv.join(' ');
      const installed = [...argv.matchAll(/'hook'\s*'([a-z-]+)'/g)].map((m) => m[1]);
      expect(installed.sort(), agent.name).toEqual(Object.keys(agent.hooks).sort());
    }
  });

  it("reads each hook's input: the session id and the message it keeps", () => {
    const read = (kind: string, input: unknown) => hookOf(kind)!.hook.input.parse(input);
    const stop = { session_id: 's', last_assistant_message: 'Done.', message: 'ignored' };
    expect(read('claude-stop', stop)).toEqual({ session_id: 's', last_message: 'Done.' });
    expect(read('codex-stop', stop)).toEqual({ session_id: 's', last_message: 'Done.' });
    // (the session file, where the Stop hook's input names it: its usage is read from it)
    expect(read('codex-stop', { ...stop, transcript_path: '/r.jsonl' })).toMatchObject({
      transcript_path: '/r.jsonl',
    });
    expect(read('claude-notification', { session_id: 's', message: 'Claude needs your permission' })).toEqual(
      {
        session_id: 's',
        last_message: 'Claude needs your permission',
      },
    );
    expect(read('codex-session', { session_id: 't', source: 'startup' })).toEqual({
      session_id: 't',
      last_message: null,
    });
    expect(hookOf('claude-stop')!.hook.input.safeParse({ session_id: '' }).success).toBe(false);
  });
});

describe('claude', () => {
  it('interactive: its own session id, and the Stop hook in per-session settings', () => {
    const launch = claudeAgent.launch(input());
    expect(launch.sessionId).toBe('new-id');
    expect(launch.hookTurns).toBe(true);
    expect(launch.argv.slice(0, 3)).toEqual(['claude', '--session-id', 'new-id']);
    const settings = JSON.parse(launch.argv[launch.argv.indexOf('--settings') + 1]!) as {
      hooks: { Stop: { hooks: { command: string; timeout: number }[] }[] };
    };
    expect(settings.hooks.Stop[0]!.hooks[0]!.command).toBe(
      `'/usr/bin/node' '/opt/lanes/main.js' 'hook' 'claude-stop'`,
    );
    expect(launch.argv.slice(-3)).toEqual(['--model', 'm', 'do the task']);
    expect(launch.argv.join(' ')).not.toMatch(/dangerously|bypass/);
  });

  it('a relaunch resumes the session; headless is -p with stream-json and no hook', () => {
    expect(claudeAgent.launch(input({ resumeSessionId: 'old' })).argv.slice(0, 3)).toEqual([
      'claude',
      '--resume',
      'old',
    ]);
    const headless = claudeAgent.launch(input({ mode: 'headless', resumeSessionId: 'old' }));
    expect(headless.hookTurns).toBe(false);
    expect(headless.argv).toEqual([
      'claude',
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--resume',
      'old',
      '--model',
      'm',
      'do the task',
    ]);
  });

  it('renders stream-json into transcript lines', () => {
    const lines = [
      { type: 'system', subtype: 'init', session_id: 's1' },
      {
        type: 'assistant',
        message: {
          content: [
            { type: 'text', text: 'Writing.' },
            { type: 'tool_use', name: 'Write', input: { file_path: '/l/src/a.txt' } },
          ],
        },
      },
      { type: 'user', message: { content: [{ type: 'tool_result', content: 'File created' }] } },
      { type: 'result', subtype: 'success' },
    ].flatMap((e) => claudeAgent.renderLine(JSON.stringify(e)));
    expect(lines).toEqual([
      '[claude] session s1 started',
      '[claude] Writing.',
      '[claude] → Write /l/src/a.txt',
      '[claude]   ✓ File created',
      '[claude] turn ended: success',
    ]);
    expect(claudeAgent.renderLine('plain text')).toEqual(['plain text']);
    expect(claudeAgent.sessionIdFromOutput(JSON.stringify({ type: 'system', session_id: 's1' }))).toBe('s1');
  });

  it('blocks the stop with the feedback; lets it happen otherwise', () => {
    expect(JSON.parse(claudeAgent.hookOutput({ verdict: 'continue', feedback: 'fix it' }).stdout)).toEqual({
      decision: 'block',
      reason: 'fix it',
    });
    expect(claudeAgent.hookOutput({ verdict: 'stop', why: 'passed' })).toEqual({ stdout: '', exitCode: 0 });
    expect(claudeAgent.hookOutput({ verdict: 'refused', reason: 'bad-token' })).toEqual({
      stdout: '',
      exitCode: 0,
    });
  });
});

describe('codex', () => {
  const argv = ['codex', '-c', 'sandbox_mode="workspace-write"', 'do the task'];

  it('interactive: --no-daemon and a Stop hook trusted by its own hash, nothing else', () => {
    const launch = codexAgent.launch(input({ argv, promptIndex: 3 }));
    expect(launch.argv[1]).toBe('--no-daemon');
    const [, stop, , start, , state] = codexHooks(input().hookArgv);
    expect(launch.argv).toContain(stop);
    expect(launch.argv).toContain(start);
    expect(launch.argv).toContain(state);
    const command = `'/usr/bin/node' '/opt/lanes/main.js' 'hook' 'codex-stop'`;
    const reviewed = `{"event_name":"stop","hooks":[{"async":false,"command":${JSON.stringify(command)},"timeout":3600,"type":"command"}]}`;
    expect(state).toContain(
      `"/<session-flags>/config.toml:stop:0:0"={trusted_hash="sha256:${createHash('sha256').update(reviewed).digest('hex')}"}`,
    );
    expect(launch.argv.join(' ')).not.toMatch(/dangerously|bypass/);
  });

  it('headless: exec --json, exec options before `resume <thread>`, the prompt after it', () => {
    expect(codexAgent.launch(input({ argv, mode: 'headless' })).argv).toEqual([
      'codex',
      'exec',
      '--json',
      '-c',
      'sandbox_mode="workspace-write"',
      'do the task',
    ]);
    expect(codexAgent.launch(input({ argv, mode: 'headless', resumeSessionId: 't1' })).argv).toEqual([
      'codex',
      'exec',
      '--json',
      '-c',
      'sandbox_mode="workspace-write"',
      'resume',
      't1',
      'do the task',
    ]);
    expect(codexAgent.launch(input({ argv, resumeSessionId: 't1' })).argv.slice(0, 4)).toEqual([
      'codex',
      'resume',
      't1',
      '--no-daemon',
    ]);
  });

  it('reads the thread id and renders exec events', () => {
    expect(codexAgent.sessionIdFromOutput('{"type":"thread.started","thread_id":"t1"}')).toBe('t1');
    expect(codexAgent.sessionIdFromOutput('{"type":"turn.started"}')).toBeNull();
    const lines = [
      {
        type: 'item.completed',
        item: {
          type: 'command_execution',
          command: 'printf right > src/a.txt',
          exit_code: 0,
          aggregated_output: '',
        },
      },
      { type: 'item.completed', item: { type: 'agent_message', text: 'Done.' } },
      { type: 'turn.completed' },
    ].flatMap((e) => codexAgent.renderLine(JSON.stringify(e)));
    expect(lines).toEqual([
      '[codex] → printf right > src/a.txt',
      '[codex]   exit 0',
      '[codex] Done.',
      '[codex] turn ended',
    ]);
  });
});
