import type { HookReply } from '../core/hook-message.js';
import type { AgentAdapter, AgentLaunch, AgentLaunchInput, HookOutput } from './agent.js';
import { firstLine, jsonObject } from './agent.js';

// Codex. Interactive: lanes sets `notify` for this session only (`-c`, never the user's
// config.toml); Codex runs it with a JSON payload at each `agent-turn-complete`. The TUI
// runs with `--no-daemon` (no background server left behind). A rework is typed into
// the pane. Headless: `codex exec --json`, the exit ends the turn, a rework is
// `codex exec resume <thread>` with the feedback.

export function tomlString(text: string): string {
  return JSON.stringify(text); // a JSON string is a valid TOML basic string
}

export const codexAgent: AgentAdapter = {
  name: 'codex',
  quitKeys: '/quit\r',
  reworkBy: 'typing',
  launch(input: AgentLaunchInput): AgentLaunch {
    const [program, ...rest] = input.argv;
    const trust = ['-c', `projects.${tomlString(input.lanePath)}.trust_level="trusted"`];
    if (input.mode === 'headless') {
      const resume = input.resumeSessionId ? ['resume', input.resumeSessionId] : [];
      return {
        argv: [program!, 'exec', '--json', ...resume, ...trust, ...rest],
        sessionId: input.resumeSessionId,
        hookTurns: false,
      };
    }
    const notify = ['-c', `notify=[${[...input.hookArgv, 'codex-notify'].map(tomlString).join(',')}]`];
    const resume = input.resumeSessionId ? ['resume', input.resumeSessionId] : [];
    return {
      argv: [program!, ...resume, '--no-daemon', ...notify, ...trust, ...rest],
      sessionId: input.resumeSessionId,
      hookTurns: true,
    };
  },
  sessionIdFromOutput(line) {
    const event = jsonObject(line);
    return event?.type === 'thread.started' && typeof event.thread_id === 'string' ? event.thread_id : null;
  },
  renderLine(line) {
    const event = jsonObject(line);
    if (!event) return line.trim() ? [line] : [];
    return renderCodexEvent(event);
  },
  hookOutput(_reply: HookReply): HookOutput {
    return { stdout: '', exitCode: 0 }; // notify is not waited for: nothing to print
  },
};

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
