import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { startModelServer } from './fixtures/model-server/server.mjs';
import type { Script } from './fixtures/model-server/server.mjs';
import { serverRequests } from './helpers/agents.js';
import { tempDir } from './helpers/repo.js';
import { until } from './helpers/until.js';

// The scripted model server on its own, spoken to as the agents speak to it (their wire
// formats, measured in docs/AGENTS.md): which answer a conversation gets, the request log,
// the gate that holds an agent mid-turn, and the server as a separate process.

const SERVER = join(import.meta.dirname, 'fixtures', 'model-server', 'server.mjs');
const script: Script = {
  tasks: [
    {
      match: '# Task a (',
      turns: [
        { actions: [{ write: 'a.txt', content: 'wrong\n' }], say: 'Done.' },
        { when: 'expected right', actions: [{ write: 'a.txt', content: 'right\n' }], say: 'Fixed.' },
      ],
    },
  ],
};

const dir = tempDir('lanes-model-server-');
const log = join(dir, 'requests.jsonl');
const server = await startModelServer({ script, logFile: log });
afterAll(() => server.close());

const SYSTEM = 'You are Claude Code.\n - Primary working directory: /lane\n';
const user = (text: string) => ({ role: 'user', content: [{ type: 'text', text }] });
const toolUse = (name: string) => ({
  role: 'assistant',
  content: [{ type: 'tool_use', id: `t-${name}`, name, input: {} }],
});
const toolResult = () => ({
  role: 'user',
  content: [{ type: 'tool_result', tool_use_id: 't', content: 'ok' }],
});
const TOOLS = [{ name: 'Read' }, { name: 'Write' }, { name: 'Bash' }];

async function messages(body: object): Promise<{
  content: { type: string; name?: string; input?: unknown; text?: string }[];
  stop_reason: string;
}> {
  const res = await fetch(`${server.url}/v1/messages?beta=true`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-claude-code-session-id': 's-1' },
    body: JSON.stringify({ model: 'm', system: SYSTEM, tools: TOOLS, ...body }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as never;
}

describe('the Anthropic Messages dialect', () => {
  it('reads, then writes the scripted file by its absolute path, then ends the turn', async () => {
    const read = await messages({ messages: [user('# Task a (batch b, attempt 1)')] });
    expect(read.content).toEqual([
      expect.objectContaining({ type: 'tool_use', name: 'Read', input: { file_path: '/lane/a.txt' } }),
    ]);
    expect(read.stop_reason).toBe('tool_use');
    const write = await messages({
      messages: [user('# Task a (batch b, attempt 1)'), toolUse('Read'), toolResult()],
    });
    expect(write.content[0]).toMatchObject({
      name: 'Write',
      input: { file_path: '/lane/a.txt', content: 'wrong\n' },
    });
    const end = await messages({
      messages: [
        user('# Task a (batch b, attempt 1)'),
        toolUse('Read'),
        toolResult(),
        toolUse('Write'),
        toolResult(),
      ],
    });
    expect(end).toMatchObject({ content: [{ type: 'text', text: 'Done.' }], stop_reason: 'end_turn' });
  });

  it('writes the right file only when the latest user message carries the check output', async () => {
    const history = [
      user('# Task a (batch b, attempt 1)'),
      toolUse('Read'),
      toolResult(),
      toolUse('Write'),
      toolResult(),
    ];
    const told = await messages({
      messages: [
        ...history,
        user('Stop hook feedback:\nexpected right, got wrong'),
        toolUse('Read'),
        toolResult(),
      ],
    });
    expect(told.content[0]).toMatchObject({ name: 'Write', input: { content: 'right\n' } });
    const notTold = await messages({
      messages: [...history, user('please retry'), toolUse('Read'), toolResult()],
    });
    expect(notTold.content[0]).toMatchObject({ name: 'Write', input: { content: 'wrong\n' } });
  });

  it('answers what it has no script for, and side requests without tools, with plain text', async () => {
    expect((await messages({ messages: [user('something else')] })).content).toEqual([
      { type: 'text', text: 'nothing scripted' },
    ]);
    expect(
      (await messages({ tools: [], messages: [user('title for: # Task a (batch b)')] })).content,
    ).toEqual([{ type: 'text', text: 'nothing scripted' }]);
  });

  it('streams the same answer as server-sent events', async () => {
    const res = await fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        stream: true,
        system: SYSTEM,
        tools: TOOLS,
        messages: [user('# Task a (batch b, attempt 1)')],
      }),
    });
    const events = (await res.text())
      .split('\n')
      .filter((l) => l.startsWith('event: '))
      .map((l) => l.slice(7));
    expect(events).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
  });

  it('logs every request with its headers and body', async () => {
    const logged = serverRequests(log).filter((r) => r.headers['x-claude-code-session-id'] === 's-1');
    expect(logged.length).toBeGreaterThanOrEqual(3);
    expect(logged[0]).toMatchObject({ method: 'POST', path: '/v1/messages?beta=true', body: { model: 'm' } });
  });
});

describe('the OpenAI Responses dialect', () => {
  const input = (text: string) => [
    {
      type: 'message',
      role: 'user',
      content: [
        { type: 'input_text', text: '<environment_context>\n  <cwd>/lane</cwd>\n</environment_context>' },
      ],
    },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text }] },
  ];
  async function responses(body: object): Promise<Record<string, unknown>[]> {
    const res = await fetch(`${server.url}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'thread-id': 'th-1' },
      body: JSON.stringify({
        model: 'm',
        stream: true,
        tools: [{ type: 'function', name: 'exec_command' }],
        ...body,
      }),
    });
    return (await res.text())
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>);
  }

  it('runs the scripted write as one exec_command in the lane, then says the text', async () => {
    const first = await responses({ input: input('# Task a (batch b, attempt 1)') });
    expect(first.map((e) => e.type)).toEqual([
      'response.created',
      'response.output_item.added',
      'response.output_item.done',
      'response.completed',
    ]);
    const call = first[2]?.item as { type: string; name: string; arguments: string; call_id: string };
    expect(call).toMatchObject({ type: 'function_call', name: 'exec_command' });
    const args = JSON.parse(call.arguments) as { cmd: string; workdir: string };
    expect(args.workdir).toBe('/lane');
    expect(args.cmd).toContain("'a.txt'");
    const done = await responses({
      input: [
        ...input('# Task a (batch b, attempt 1)'),
        call,
        { type: 'function_call_output', call_id: call.call_id, output: 'ok' },
      ],
    });
    expect(done.at(-1)).toMatchObject({
      type: 'response.completed',
      response: { output: [{ type: 'message', content: [{ text: 'Done.' }] }] },
    });
  });

  it('finds the check output in an escaped hook prompt', async () => {
    const events = await responses({
      input: [
        ...input('# Task a (batch b, attempt 1)'),
        {
          type: 'message',
          role: 'user',
          content: [
            {
              type: 'input_text',
              text: '<hook_prompt hook_run_id="stop:0">expected right &amp; more</hook_prompt>',
            },
          ],
        },
      ],
    });
    const call = events[2]?.item as { arguments: string };
    expect(JSON.parse(call.arguments).cmd).toContain("'right\n'");
  });
});

describe('the gate', () => {
  it('holds the answer of a turn until the file exists, after logging the request', async () => {
    const gate = join(dir, 'gate');
    const held = await startModelServer({
      logFile: join(dir, 'held.jsonl'),
      script: { tasks: [{ match: '# Task h (', turns: [{ hold: gate, say: 'Released.' }] }] },
    });
    let answered = false;
    const reply = fetch(`${held.url}/v1/messages`, {
      method: 'POST',
      body: JSON.stringify({ tools: TOOLS, messages: [user('# Task h (batch b, attempt 1)')] }),
    }).then(async (res) => {
      answered = true;
      return (await res.json()) as { content: { text: string }[] };
    });
    await until(() => serverRequests(join(dir, 'held.jsonl')).length === 1, 'the held request in the log');
    expect(answered).toBe(false);
    writeFileSync(gate, '');
    expect((await reply).content[0]?.text).toBe('Released.');
    await held.close();
  });
});

describe('the server as a process', () => {
  it('prints its port, serves, and ends on SIGTERM', async () => {
    const scriptFile = join(dir, 'script.json');
    writeFileSync(scriptFile, JSON.stringify(script));
    const child = spawn(
      process.execPath,
      [SERVER, '--script', scriptFile, '--log', join(dir, 'proc.jsonl')],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const first = await new Promise<string>((resolve) =>
      createInterface({ input: child.stdout! }).once('line', resolve),
    );
    const { port } = JSON.parse(first) as { port: number };
    const res = await fetch(`http://127.0.0.1:${port}/v1/nothing`);
    expect(res.status).toBe(404);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(serverRequests(join(dir, 'proc.jsonl')).map((r) => r.path)).toEqual(['/v1/nothing']);
  });

  it('refuses a bad script with a message naming what is wrong', async () => {
    await expect(startModelServer({ script: { tasks: [{ match: '', turns: [] }] } })).rejects.toThrow(
      /tasks\[0\]\.match must be a non-empty string/,
    );
  });
});
