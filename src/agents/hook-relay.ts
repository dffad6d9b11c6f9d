import { connect } from 'node:net';
import { z } from 'zod';
import { jsonObject } from './agent.js';
import { transcriptUsage } from './transcript-usage.js';
import { AGENTS, hookKinds, hookOf } from './agents.js';
import type { AgentRegistry } from './agents.js';
import { badInput } from '../core/basics/errors.js';
import { HOOK_PROTOCOL, hookMessageSchema, hookReplySchema } from '../core/turns/hook-message.js';
import type { HookMessage, HookReply } from '../core/turns/hook-message.js';
import { formatIssues } from '../core/basics/issues.js';

// `lanes hook <kind>` (src/cli/commands/hook.ts) and `node machine.js hook <kind>` on a
// machine (src/machines/side): what an agent runs at its hook (its adapter puts it in the agent's
// per-session settings). The kind names the adapter and the hook (src/agents/agents.ts
// hookOf); the adapter reads the hook input, this forwards it to the running coordinator
// over the channel named in its environment, and the adapter says what to print for the
// verdict (a Stop hook blocks the stop with the failing checks' output, or lets it happen).
// It names no agent: the registry does.

const envSchema = z.object({
  LANES_HOOK_SOCKET: z.string().min(1),
  LANES_HOOK_TOKEN: z.string().min(16),
  LANES_TASK: z.string().min(1),
  LANES_RUN: z.string().min(1),
  LANES_ATTEMPT: z.coerce.number().int().positive(),
});

function parseJson<T>(text: string, schema: z.ZodType<T>, what: string): T {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw badInput('hook_invalid', `hook: ${what} is not valid JSON: ${(error as Error).message}`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success)
    throw badInput('hook_invalid', `hook: ${what} is invalid: ${formatIssues(parsed.error).join('; ')}`);
  return parsed.data;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Where the hook runs and where it prints (a command's context). */
export interface HookContext {
  cwd: string;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

export interface HookIo {
  stdin?: () => Promise<string>;
  env?: NodeJS.ProcessEnv;
  /** The agents whose hooks it knows (a test adds its own); lanes' registry by default. */
  agents?: AgentRegistry;
}

/** `lanes hook <kind>` (the agent's hook input on stdin); the kinds are the registry's agents' hooks. */
export async function relayHook(ctx: HookContext, argv: string[], io: HookIo = {}): Promise<number> {
  const agents = io.agents ?? AGENTS;
  const found = argv[0] === undefined ? null : hookOf(argv[0], agents);
  if (!found) throw badInput('usage', `usage: lanes hook ${hookKinds(agents).join('|')}`);
  const envParsed = envSchema.safeParse(io.env ?? process.env);
  if (!envParsed.success)
    throw badInput(
      'hook_invalid',
      `hook: not started by lanes (its environment lacks ${formatIssues(envParsed.error).join('; ')})`,
    );
  const env = envParsed.data;
  const base = {
    v: HOOK_PROTOCOL,
    task: env.LANES_TASK,
    run_id: env.LANES_RUN,
    attempt: env.LANES_ATTEMPT,
    token: env.LANES_HOOK_TOKEN,
    cwd: ctx.cwd,
  } as const;
  const input = parseJson(await (io.stdin ?? readStdin)(), found.hook.input, 'the hook input (stdin)');
  const message: HookMessage = {
    ...base,
    kind: found.hook.event,
    agent: found.agent.name,
    session_id: input.session_id,
    last_message: input.last_message,
    ...(found.hook.event === 'turn-end'
      ? { usage: await transcriptUsage(found.agent, input.transcript_path ?? null, input.last_message) }
      : {}),
  };
  hookMessageSchema.parse(message);
  let reply: HookReply;
  try {
    reply = await askRetrying(env.LANES_HOOK_SOCKET, message);
  } catch (error) {
    // No coordinator came back: the agent stops as it would without lanes; a restarted
    // lanes finds the lane and continues the session.
    ctx.stderr(`lanes hook: the coordinator did not answer (${(error as Error).message})\n`);
    return 0;
  }
  if (reply.verdict === 'refused') ctx.stderr(`lanes hook: refused: ${reply.reason}\n`);
  const out = found.agent.hookOutput(reply);
  if (out.stdout) ctx.stdout(out.stdout);
  return out.exitCode;
}

/** While a coordinator restarts (the agent outlived it), its socket is away for a moment. */
const RETRY_FOR_MS = 30_000;
const RETRY_EVERY_MS = 500;

async function askRetrying(socketPath: string, message: HookMessage): Promise<HookReply> {
  const deadline = Date.now() + RETRY_FOR_MS;
  for (;;) {
    try {
      return await ask(socketPath, message);
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, RETRY_EVERY_MS));
    }
  }
}

function ask(socketPath: string, message: HookMessage): Promise<HookReply> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    let text = '';
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(`${JSON.stringify(message)}\n`));
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const line = text.split('\n')[0] ?? '';
      const parsed = hookReplySchema.safeParse(jsonObject(line));
      if (parsed.success) resolve(parsed.data);
      else reject(new Error(line ? `unreadable reply: ${line.slice(0, 200)}` : 'no reply'));
    });
  });
}
