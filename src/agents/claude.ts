import type { Usage } from '../core/records/usage.js';
import type { AgentAdapter, AgentLaunch, AgentLaunchInput } from './agent.js';
import {
  blockingStopHookOutput,
  count,
  firstLine,
  jsonHookInput,
  jsonObject,
  renderJsonLine,
  shellCommand,
  STOP_HOOK_TIMEOUT_S,
} from './agent.js';

// Claude Code. Interactive: lanes adds a Stop hook for this session only (`--settings`
// with a JSON string: merged over the user's own settings, whose files lanes never
// touches). The hook waits for QA: a failure blocks the stop with the checks' output, so
// Claude goes on in the same session; a pass lets it stop. Headless: `-p` with
// stream-json, the process's exit ends the turn, a rework resumes the session by id.

/** lanes' hook kinds for Claude (`lanes hook <kind>`, written into the session's settings). */
const STOP = 'claude-stop';
const NOTIFICATION = 'claude-notification';

export function claudeSettings(hookArgv: readonly string[]): string {
  const command = (kind: string) => ({
    type: 'command',
    command: shellCommand([...hookArgv, kind]),
    timeout: STOP_HOOK_TIMEOUT_S,
  });
  return JSON.stringify({
    hooks: {
      Stop: [{ hooks: [command(STOP)] }],
      Notification: [{ hooks: [{ ...command(NOTIFICATION), timeout: 30 }] }],
    },
  });
}

export const claudeAgent: AgentAdapter<'claude'> = {
  name: 'claude',
  sessions: true,
  quitKeys: ['/exit', '\r'],
  promptPatterns: ['Do you want to', '❯ 1\\. Yes', 'Yes, I trust this folder'],
  reworkBy: 'hook',
  hooks: {
    [STOP]: { event: 'turn-end', input: jsonHookInput('last_assistant_message') },
    // It waits for the user (a permission prompt): the lane shows `waiting`.
    [NOTIFICATION]: { event: 'notification', input: jsonHookInput('message') },
  },
  launch(input: AgentLaunchInput): AgentLaunch {
    const [program, ...rest] = input.argv;
    const session = input.resumeSessionId
      ? ['--resume', input.resumeSessionId]
      : ['--session-id', input.newSessionId];
    const sessionId = input.resumeSessionId ?? input.newSessionId;
    if (input.mode === 'headless')
      return {
        argv: [program!, '-p', '--output-format', 'stream-json', '--verbose', ...session, ...rest],
        sessionId,
        hookTurns: false,
      };
    return {
      argv: [program!, ...session, '--settings', claudeSettings(input.hookArgv), ...rest],
      sessionId,
      hookTurns: true,
    };
  },
  sessionIdFromOutput(line) {
    const event = jsonObject(line);
    return typeof event?.session_id === 'string' ? event.session_id : null;
  },
  usageIs: 'added',
  usageFromOutput: (line) => claudeUsage(jsonObject(line)),
  usageFromTranscript: claudeTranscriptUsage,
  transcriptHolds: claudeTranscriptHolds,
  renderLine: (line) => renderJsonLine(line, renderClaudeEvent),
  hookOutput: blockingStopHookOutput,
  // Plan mode: Claude Code reads and answers, its edit and shell tools asking for a
  // permission that -p never gives.
  readOnly: {
    argv: (program, prompt, sessionId, fresh) => [
      program,
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--permission-mode',
      'plan',
      ...(sessionId ? ['--resume', sessionId] : ['--session-id', fresh]),
      prompt,
    ],
    sessionFrom: (line) => claudeAgent.sessionIdFromOutput(line),
    answerFrom(line) {
      const event = jsonObject(line);
      return event?.type === 'result' && typeof event.result === 'string' && event.is_error !== true
        ? event.result
        : null;
    },
    // (an API error ends the run with a `result` of is_error true whose text is the error)
    failureFrom(line) {
      const event = jsonObject(line);
      return event?.type === 'result' && event.is_error === true
        ? String(event.result ?? event.subtype)
        : null;
    },
  },
};

/**
 * stream-json's `result` (one per `-p` run): the run's usage summed over its model calls,
 * cache reads and writes as input, and Claude Code's own `total_cost_usd`.
 */
export function claudeUsage(event: Record<string, unknown> | null): Usage | null {
  if (event?.type !== 'result' || !event.usage || typeof event.usage !== 'object') return null;
  const u = event.usage as Record<string, unknown>;
  const cost = event.total_cost_usd;
  return {
    input_tokens:
      count(u.input_tokens) + count(u.cache_creation_input_tokens) + count(u.cache_read_input_tokens),
    output_tokens: count(u.output_tokens),
    cost_usd: typeof cost === 'number' && Number.isFinite(cost) && cost >= 0 ? cost : null,
  };
}

/**
 * The session transcript (JSONL): each model call's `usage` on its assistant lines (one
 * line per content block, the same message id and usage on each), summed once a call.
 */
export function claudeTranscriptUsage(text: string): Usage | null {
  const calls = new Map<string, Record<string, unknown>>();
  for (const { id, event } of assistantLines(text)) {
    const usage = (event.message as Record<string, unknown>).usage;
    if (usage && typeof usage === 'object') calls.set(id, usage as Record<string, unknown>);
  }
  if (calls.size === 0) return null;
  let input = 0;
  let output = 0;
  for (const u of calls.values()) {
    input += count(u.input_tokens) + count(u.cache_creation_input_tokens) + count(u.cache_read_input_tokens);
    output += count(u.output_tokens);
  }
  return { input_tokens: input, output_tokens: output, cost_usd: null };
}

/**
 * Whether the session transcript holds the turn's last message (the Stop hook's
 * `last_assistant_message`: the text of its last assistant message). Claude Code appends to
 * the transcript from a queue it drains on a 100 ms timer, and runs the Stop hook without
 * draining it (the pinned CLI): a hook that reads the file at once can miss the turn's last
 * model call, and that call's tokens would be in no turn end (docs/DECISIONS.md "The turn's
 * last call in the session file").
 */
export function claudeTranscriptHolds(text: string, lastMessage: string): boolean {
  let lastId: string | null = null;
  const texts = new Map<string, string[]>();
  for (const { id, event } of assistantLines(text)) {
    lastId = id;
    const said = texts.get(id) ?? [];
    for (const b of blocks(event)) if (b.type === 'text' && b.text) said.push(b.text);
    texts.set(id, said);
  }
  // (compared without whitespace: how the hook joins a message's text blocks is Claude's own)
  const bare = (t: string) => t.replace(/\s+/g, '');
  return lastId !== null && bare((texts.get(lastId) ?? []).join('')) === bare(lastMessage);
}

/** The transcript's assistant lines with their message id (a model call's lines share it). */
function* assistantLines(text: string): Generator<{ id: string; event: Record<string, unknown> }> {
  for (const line of text.split('\n')) {
    const event = jsonObject(line);
    const message = event?.type === 'assistant' ? (event.message as Record<string, unknown>) : null;
    if (message && typeof message.id === 'string') yield { id: message.id, event: event! };
  }
}

interface ContentBlock {
  type?: string;
  text?: string;
  name?: string;
  input?: Record<string, unknown>;
  content?: unknown;
  is_error?: boolean;
}

function blocks(event: Record<string, unknown>): ContentBlock[] {
  const message = event.message as { content?: unknown } | undefined;
  return Array.isArray(message?.content) ? (message.content as ContentBlock[]) : [];
}

function renderClaudeEvent(event: Record<string, unknown>): string[] {
  switch (event.type) {
    case 'system':
      return event.subtype === 'init' ? [`[claude] session ${String(event.session_id)} started`] : [];
    case 'assistant':
      return blocks(event).flatMap((b) => {
        if (b.type === 'text' && b.text?.trim())
          return b.text
            .trim()
            .split('\n')
            .map((l) => `[claude] ${l}`);
        if (b.type === 'tool_use') return [`[claude] → ${b.name ?? 'tool'} ${toolTarget(b.input)}`.trimEnd()];
        return [];
      });
    case 'user':
      return blocks(event).flatMap((b) =>
        b.type === 'tool_result'
          ? [`[claude]   ${b.is_error ? '✗' : '✓'} ${firstLine(resultText(b.content))}`.trimEnd()]
          : [],
      );
    case 'result':
      return [`[claude] turn ended: ${String(event.subtype)}${event.is_error ? ' (error)' : ''}`];
    default:
      return [];
  }
}

function toolTarget(input: Record<string, unknown> | undefined): string {
  for (const key of ['file_path', 'path', 'command', 'pattern']) {
    const value = input?.[key];
    if (typeof value === 'string') return firstLine(value, 120);
  }
  return '';
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((c) => (typeof (c as ContentBlock).text === 'string' ? (c as ContentBlock).text : ''))
      .join('\n');
  return '';
}
