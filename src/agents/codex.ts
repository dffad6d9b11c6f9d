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
import { codexHookOverrides } from './codex-hook-trust.js';

// Codex. Interactive: lanes adds a Stop and a SessionStart hook for this session only
// (`-c hooks.Stop=…`, never the user's config.toml), and trusts those hooks on the same
// command line (`-c hooks.state=…` with the hash Codex keeps for a reviewed hook), so no
// other hook is trusted by it. The hook waits for QA: a failure blocks the stop with the checks'
// output (Codex goes on in the same thread), a pass lets it stop. `--no-daemon`: no app
// server is left running after the session. Headless: `codex exec --json`; its exit ends
// the turn; a rework is `codex exec … resume <thread> <feedback>`.

/** lanes' hook kinds for Codex (`lanes hook <kind>`, added with `-c`). */
const STOP = 'codex-stop';
const SESSION = 'codex-session';

/** lanes' Codex hooks: the event, lanes' hook kind, its timeout. */
const HOOKS = [
  { event: 'Stop', kind: STOP, timeout: STOP_HOOK_TIMEOUT_S },
  // At start-up, so a crash before the first turn end still knows the thread to resume.
  { event: 'SessionStart', kind: SESSION, timeout: 30 },
] as const;

/**
 * `-c` arguments that add lanes' hooks for this session and trust exactly them: Codex
 * runs a hook only once its hash (of its reviewed definition) is trusted (codex-hook-trust.ts).
 */
export function codexHooks(hookArgv: readonly string[]): string[] {
  const hooks = HOOKS.map((hook) => ({
    event: hook.event,
    command: shellCommand([...hookArgv, hook.kind]),
    timeoutSeconds: hook.timeout,
  }));
  return codexHookOverrides(hooks).flatMap((value) => ['-c', value]);
}

export const codexAgent: AgentAdapter<'codex'> = {
  name: 'codex',
  sessions: true,
  quitKeys: ['/quit', '\r'],
  promptPatterns: ['Would you like to', '› 1\\. Yes', 'Trust this folder\\?', 'Allow command\\?'],
  reworkBy: 'hook',
  hooks: {
    [STOP]: { event: 'turn-end', input: jsonHookInput('last_assistant_message') },
    // At start-up: the thread id, before any turn ends.
    [SESSION]: { event: 'session', input: jsonHookInput(null) },
  },
  launch(input: AgentLaunchInput): AgentLaunch {
    const [program, ...rest] = input.argv;
    const resume = input.resumeSessionId ? ['resume', input.resumeSessionId] : [];
    if (input.mode === 'headless') {
      // `exec`'s options go before `resume`, the prompt after it.
      const at = input.promptIndex === null ? -1 : input.promptIndex - 1;
      const flags = rest.filter((_, i) => i !== at);
      const prompt = at >= 0 ? [rest[at]!] : [];
      return {
        argv: [program!, 'exec', '--json', ...flags, ...resume, ...prompt],
        sessionId: input.resumeSessionId,
        hookTurns: false,
      };
    }
    return {
      argv: [program!, ...resume, '--no-daemon', ...codexHooks(input.hookArgv), ...rest],
      sessionId: input.resumeSessionId,
      hookTurns: true,
    };
  },
  sessionIdFromOutput(line) {
    const event = jsonObject(line);
    return event?.type === 'thread.started' && typeof event.thread_id === 'string' ? event.thread_id : null;
  },
  usageIs: 'session-total',
  usageFromOutput: (line) => codexUsage(jsonObject(line)),
  usageFromTranscript: codexRolloutUsage,
  renderLine: (line) => renderJsonLine(line, renderCodexEvent),
  hookOutput: blockingStopHookOutput,
  // Its read-only sandbox: commands run, none writes.
  readOnly: {
    argv: (program, prompt, sessionId) => [
      program,
      'exec',
      '--json',
      '--sandbox',
      'read-only',
      ...(sessionId ? ['resume', sessionId] : []),
      prompt,
    ],
    sessionFrom: (line) => codexAgent.sessionIdFromOutput(line),
    answerFrom(line) {
      const event = jsonObject(line);
      const item = (event?.type === 'item.completed' ? event.item : null) as Item | null;
      return item?.type === 'agent_message' && typeof item.text === 'string' ? item.text : null;
    },
    // (its `error` events before are retries and warnings; `turn.failed` is the end)
    failureFrom(line) {
      const event = jsonObject(line);
      if (event?.type !== 'turn.failed') return null;
      const error = event.error as { message?: unknown } | undefined;
      return typeof error?.message === 'string' ? error.message : 'turn.failed';
    },
  },
};

/**
 * `exec --json`'s `turn.completed`: the turn's usage (its input counts the cached input
 * too; reasoning is part of the output). Codex gives no cost figure.
 */
export function codexUsage(event: Record<string, unknown> | null): Usage | null {
  if (event?.type !== 'turn.completed' || !event.usage || typeof event.usage !== 'object') return null;
  const u = event.usage as Record<string, unknown>;
  return { input_tokens: count(u.input_tokens), output_tokens: count(u.output_tokens), cost_usd: null };
}

/** The session's rollout file (JSONL): its last `token_count` event's `total_token_usage`. */
export function codexRolloutUsage(text: string): Usage | null {
  let last: Record<string, unknown> | null = null;
  for (const line of text.split('\n')) {
    const payload = jsonObject(line)?.payload as Record<string, unknown> | undefined;
    const info = payload?.type === 'token_count' ? (payload.info as Record<string, unknown> | null) : null;
    const total = info?.total_token_usage;
    if (total && typeof total === 'object') last = total as Record<string, unknown>;
  }
  if (!last) return null;
  return { input_tokens: count(last.input_tokens), output_tokens: count(last.output_tokens), cost_usd: null };
}

interface Item {
  type?: string;
  text?: string;
  command?: string;
  exit_code?: number | null;
  aggregated_output?: string;
  changes?: { path?: string; kind?: string }[];
  message?: string;
}

function renderCodexEvent(event: Record<string, unknown>): string[] {
  switch (event.type) {
    case 'thread.started':
      return [`[codex] thread ${String(event.thread_id)} started`];
    case 'item.completed':
      return renderItem((event.item ?? {}) as Item);
    case 'turn.completed':
      return ['[codex] turn ended'];
    case 'turn.failed':
    case 'error':
      return [`[codex] error: ${firstLine(JSON.stringify(event.error ?? event.message ?? event))}`];
    default:
      return [];
  }
}

function renderItem(item: Item): string[] {
  switch (item.type) {
    case 'agent_message':
      return (item.text ?? '')
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => `[codex] ${l}`);
    case 'command_execution':
      return [
        `[codex] → ${firstLine(item.command ?? '', 120)}`,
        `[codex]   exit ${item.exit_code ?? '?'}${item.aggregated_output ? `: ${firstLine(item.aggregated_output)}` : ''}`,
      ];
    case 'file_change':
      return (item.changes ?? []).map((c) => `[codex] → ${c.kind ?? 'change'} ${c.path ?? ''}`);
    case 'error':
      return [`[codex] error: ${firstLine(item.message ?? '')}`];
    default:
      return [];
  }
}
