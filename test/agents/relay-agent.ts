import { z } from 'zod';
import { jsonObject, shellCommand } from '../../src/agents/agent.js';
import type { AgentAdapter, HookInput } from '../../src/agents/agent.js';

// A test-only agent, whole in this one file (docs/ARCHITECTURE.md "Adding an agent"): a
// made-up CLI `relay` that takes its conversation id and its turn-end hook on its command
// line, sends its own hook input (not Claude's or Codex's shape) and reads its own verdict
// output. test/agents/test-agent.test.ts adds it to the registry with one line and runs
// it through the launch and the real `lanes hook` into the coordinator.

/** Its one hook: `lanes hook relay-turn`, run by relay at the end of each turn. */
const TURN = 'relay-turn';

/** relay's turn-end input: `{"conversation": "<id>", "said": "<its last message>"}`. */
const turnInput: z.ZodType<HookInput> = z
  .strictObject({ conversation: z.string().min(1), said: z.string() })
  .transform((input) => ({ session_id: input.conversation, last_message: input.said }));

export const relayAgent: AgentAdapter<'relay'> = {
  name: 'relay',
  sessions: true,
  quitKeys: ['/bye', '\r'],
  promptPatterns: ['relay asks:'],
  reworkBy: 'hook',
  hooks: { [TURN]: { event: 'turn-end', input: turnInput } },
  launch(input) {
    const [program, ...rest] = input.argv;
    const conversation = input.resumeSessionId ?? input.newSessionId;
    const resume = input.resumeSessionId ? ['--resume'] : [];
    return {
      argv: [
        program!,
        '--conversation',
        conversation,
        ...resume,
        ...(input.mode === 'interactive' ? ['--on-turn', shellCommand([...input.hookArgv, TURN])] : []),
        ...rest,
      ],
      sessionId: conversation,
      hookTurns: input.mode === 'interactive',
    };
  },
  sessionIdFromOutput(line) {
    const event = jsonObject(line);
    return typeof event?.conversation === 'string' ? event.conversation : null;
  },
  usageIs: 'added',
  usageFromOutput: () => null,
  renderLine: (line) => (line.trim() ? [`[relay] ${line}`] : []),
  // relay reads one line: `again <feedback as JSON>` to go on in the same conversation, `done` to stop.
  hookOutput(reply) {
    if (reply.verdict === 'continue')
      return { stdout: `again ${JSON.stringify(reply.feedback)}\n`, exitCode: 0 };
    return { stdout: 'done\n', exitCode: 0 };
  },
};
