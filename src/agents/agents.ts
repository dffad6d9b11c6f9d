import type { ExecutorProfile } from '../core/settings/config.js';
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

/** The profile's own prompt patterns, else its agent's (a user profile named `claude` replaces the built-in one, patterns and all). */
export function promptPatternsOf(profile: ExecutorProfile): readonly string[] {
  return profile.prompt_patterns.length ? profile.prompt_patterns : agentOf(profile).promptPatterns;
}
