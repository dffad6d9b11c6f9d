import type { HookReply } from '../core/turns/hook-message.js';
import type { AgentAdapter, AgentLaunch, AgentLaunchInput, HookOutput } from './agent.js';

// Any other command: its exit ends the turn (as it always did), no hook, no session id.
// A rework is a new attempt with the feedback in its prompt.

export const commandAgent: AgentAdapter<'command'> = {
  name: 'command',
  sessions: false,
  quitKeys: null,
  promptPatterns: [],
  reworkBy: 'typing',
  hooks: {},
  launch(input: AgentLaunchInput): AgentLaunch {
    return { argv: [...input.argv], sessionId: null, hookTurns: false };
  },
  sessionIdFromOutput: () => null,
  // (a command reports nothing of what it spends: lanes shows "—")
  usageIs: 'added',
  usageFromOutput: () => null,
  renderLine: (line) => [line],
  hookOutput(_reply: HookReply): HookOutput {
    return { stdout: '', exitCode: 0 };
  },
};
