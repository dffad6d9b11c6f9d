import { z } from 'zod';
import { planSchema } from '../../core/plan/plan.js';

// What `lanes plan draft` tells the agent: the goal, the plan's format generated from its
// zod schema (so it cannot drift from what `plan check` accepts) and what makes a plan run
// well under lanes. Later rounds send lanes' findings back into the same session.

export function planFormat(): string {
  return JSON.stringify(z.toJSONSchema(planSchema, { io: 'input', unrepresentable: 'any' }), null, 1);
}

export function draftPrompt(goal: string): string {
  return `You are writing a plan for lanes, a tool that runs coding tasks in parallel git worktrees.
Read the repository as you need; do not change any file. Answer with the plan only: one
\`\`\`yaml block, nothing after it.

# Goal: ${goal}

# What makes a good lanes plan
- One child per reviewable change, each with a clear goal.
- Disjoint scopes (the paths a child may change) where work can run side by side;
  blocked_by where one child needs another's result. No dependency cycles.
- Acceptance checks that run in seconds, can fail, and prove the child's goal; a check
  names only files that exist or that a child's scope creates.

# The plan's format (JSON Schema; write it as YAML)
${planFormat()}
`;
}

export function fixPrompt(problems: readonly string[]): string {
  return `lanes checked your plan and found:
${problems.map((p) => `- ${p}`).join('\n')}

Answer with the whole corrected plan: one \`\`\`yaml block, nothing after it.`;
}

/** The plan in an answer: its last fenced block (yaml or json), else the whole text. */
export function planText(answer: string): string {
  const blocks = [...answer.matchAll(/```(?:ya?ml|json)?[^\n]*\n([\s\S]*?)```/g)].map((m) => m[1]!);
  return (blocks.at(-1) ?? answer).trim() + '\n';
}
