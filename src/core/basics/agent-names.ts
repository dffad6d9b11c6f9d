import { z } from 'zod';

// The names of lanes' agents: the one list the core keeps of them. Every union and schema
// that names an agent is derived from it (a profile's `agent`, the adapters' registry in
// src/agents/agents.ts, which the compiler holds to exactly these names). Adding an agent:
// docs/ARCHITECTURE.md "Adding an agent".

export const AGENT_NAMES = ['claude', 'codex', 'command'] as const;
export type AgentName = (typeof AGENT_NAMES)[number];

export const agentNameSchema = z.enum(AGENT_NAMES);
