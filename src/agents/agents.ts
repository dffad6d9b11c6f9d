import type { AgentName } from '../core/basics/agent-names.js';
import type { ExecutorProfile } from '../core/settings/config.js';
import type { AgentAdapter, AgentHook } from './agent.js';
import { claudeAgent } from './claude.js';
import { codexAgent } from './codex.js';
import { commandAgent } from './command.js';

// The registry: one line per agent, each the agent's file. It must hold exactly the core's
// agent names (src/core/basics/agent-names.ts; the compiler checks both ways), and it is
// all that `lanes hook` and the coordinator know of agents. A profile names its adapter by
// its `agent` field (the built-in claude and codex profiles set it); any other profile is
// a plain command.

/** Agents by name; a test composes its own (`{ ...AGENTS, extra }`) and passes it where lanes takes one. */
export type AgentRegistry = Readonly<Record<string, AgentAdapter>>;

export const AGENTS = {
  claude: claudeAgent,
  codex: codexAgent,
  command: commandAgent,
} as const satisfies { readonly [N in AgentName]: AgentAdapter<N> };

export function agentOf(profile: ExecutorProfile): AgentAdapter {
  return AGENTS[profile.agent ?? 'command'];
}

/** The profile's own prompt patterns, else its agent's (a user profile named `claude` replaces the built-in one, patterns and all). */
export function promptPatternsOf(profile: ExecutorProfile): readonly string[] {
  return profile.prompt_patterns.length ? profile.prompt_patterns : agentOf(profile).promptPatterns;
}

/** Every hook kind of the registry's agents (`lanes hook <kind>`), in registry order. */
export function hookKinds(agents: AgentRegistry = AGENTS): string[] {
  return Object.values(agents).flatMap((agent) => Object.keys(agent.hooks));
}

/** The agent that installs hooks of this kind, and the hook; null for a kind no agent has. */
export function hookOf(
  kind: string,
  agents: AgentRegistry = AGENTS,
): { agent: AgentAdapter; hook: AgentHook } | null {
  for (const agent of Object.values(agents))
    if (Object.hasOwn(agent.hooks, kind)) return { agent, hook: agent.hooks[kind]! };
  return null;
}

/** What is wrong with a registry: a key that is not its adapter's name, a hook kind two agents claim. */
export function registryProblems(agents: AgentRegistry): string[] {
  const problems: string[] = [];
  const owner = new Map<string, string>();
  for (const [key, agent] of Object.entries(agents)) {
    if (key !== agent.name) problems.push(`agent "${agent.name}" is registered as "${key}"`);
    for (const kind of Object.keys(agent.hooks)) {
      const other = owner.get(kind);
      if (other !== undefined)
        problems.push(`hook kind "${kind}" belongs to both ${other} and ${agent.name}`);
      else owner.set(kind, agent.name);
    }
  }
  return problems;
}
