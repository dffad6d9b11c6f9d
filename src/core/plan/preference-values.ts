import { z } from 'zod';

// The values an executor preference may take (docs/DECISIONS.md "Executor preferences"):
// one schema each, shared by the config, the plan, the command line and the repository's
// AGENTS.md / CLAUDE.md directives, so a value refused in one place is refused in all.

/** Effort levels the built-in agents know (Claude Code: low…max; Codex: minimal…xhigh). */
export const EFFORT_LEVELS = ['minimal', 'low', 'medium', 'high', 'xhigh', 'max'] as const;
export type EffortLevel = (typeof EFFORT_LEVELS)[number];

/** One argument's worth of text: no blanks, no NUL, no leading `-` (it would read as a flag). */
const TOKEN = /^[A-Za-z0-9][A-Za-z0-9._:/@[\]+-]{0,127}$/;

export const modelSchema = z.string().regex(TOKEN, {
  message: 'must be a model name: letters, digits and . _ : / @ [ ] + - (no blanks), at most 128',
});

export const effortSchema = z.enum(EFFORT_LEVELS, {
  message: `must be one of ${EFFORT_LEVELS.join(', ')}`,
});

/** An agent's own permission word (Claude Code's --permission-mode, Codex's --sandbox …). */
export const permissionSchema = z.string().regex(TOKEN, {
  message: 'must be one word: letters, digits and . _ : / @ [ ] + - (no blanks)',
});

/** The first problem with `value` under `schema`, or null. */
export function valueProblem(schema: z.ZodType, value: unknown): string | null {
  const parsed = schema.safeParse(value);
  return parsed.success ? null : (parsed.error.issues[0]?.message ?? 'is not valid');
}
