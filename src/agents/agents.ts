import type { ExecutorProfile } from '../core/config.js';
import type { AgentAdapter, AgentName } from './agent.js';
import { claudeAgent } from './claude.js';
import { codexAgent } from './codex.js';
import { commandAgent } from './command.js';

// Which adapter a profile uses: its `agent` field (the built-in claude and codex profiles
// set it); any other profile is a plain command.

export const AGENTS: Readonly<Record<AgentName, AgentAdapter>> = {
  claude: claudeAgent,
  codex: codexAgent,
  command: commandAgent,
};

export function agentOf(profile: ExecutorProfile): AgentAdapter {
  return AGENTS[profile.agent ?? 'command'];
}
