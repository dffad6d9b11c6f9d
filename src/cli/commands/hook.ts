import { relayHook } from '../../agents/hook-relay.js';
import type { HookIo } from '../../agents/hook-relay.js';
import type { CommandContext } from '../context.js';

// `lanes hook <kind>`: what an agent runs at its hook. The code is src/agents/hook-relay.ts,
// shared with the side script on a machine (`node machine.js hook <kind>`), so both run the
// same checks.

export type { HookIo };

/** `lanes hook <kind>` (the agent's hook input on stdin); the kinds are the registry's agents' hooks. */
export function hookCommand(ctx: CommandContext, argv: string[], io: HookIo = {}): Promise<number> {
  return relayHook(ctx, argv, io);
}
