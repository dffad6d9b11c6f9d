import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { badInput } from './errors.js';
import { idSchema } from './ids.js';
import { formatIssues } from './issues.js';
import { scopeEntryProblem } from './scope.js';

// lanes.config.json at the repository root (SPEC §2.2). Optional; every field has a default.

export const CONFIG_FILE = 'lanes.config.json';

const noNul = (s: string) => !s.includes('\0');

/**
 * An executor profile: an argv template. Placeholders `{prompt}`, `{prompt_file}`,
 * `{task}`, `{lane}`, `{model}`, `{effort}` and `{run}` (the child's `run:` string) are
 * replaced whole-argument-wise; no shell runs unless argv[0] names one.
 */
export const profileSchema = z.strictObject({
  argv: z
    .array(z.string().refine(noNul, { message: 'must not contain a NUL byte' }))
    .min(1)
    .refine((argv) => argv[0] !== '', { message: 'argv[0] (the program) must not be empty' }),
  /** Which agent adapter launches and observes it (src/agents); a plain command when unset. */
  agent: z.enum(['claude', 'codex', 'command']).optional(),
  model: z.string().optional(),
  effort: z.string().optional(),
  /** Regular expressions that, on an idle screen, mean "the executor waits for the user". */
  prompt_patterns: z.array(z.string()).default([]),
  /** Environment variables added for the executor. */
  env: z.record(z.string(), z.string()).default({}),
});
export type ExecutorProfile = z.output<typeof profileSchema>;

const commandSchema = z.union([
  z.string().trim().min(1).refine(noNul, { message: 'must not contain a NUL byte' }),
  z
    .array(z.string().refine(noNul, { message: 'must not contain a NUL byte' }))
    .min(1)
    .refine((argv) => argv[0] !== '', { message: 'argv[0] (the program) must not be empty' }),
]);

const relativePath = z.string().superRefine((entry, ctx) => {
  const problem = scopeEntryProblem(entry);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

export const configSchema = z.strictObject({
  executors: z.record(idSchema, profileSchema).default({}),
  default_executor: idSchema.optional(),
  max_parallel: z.number().int().positive().optional(),
  /** Where lanes live: `{repo}`, `{batch}` and `{child}` are replaced; relative to the repo root. */
  lanes_root: z.string().min(1).refine(noNul).default('../{repo}.lanes/{batch}/{child}'),
  setup: z.array(commandSchema).default([]),
  copy_files: z.array(relativePath).default([]),
  stall_timeout_ms: z
    .number()
    .int()
    .positive()
    .default(15 * 60_000),
  keep_lane_branches: z.boolean().default(false),
  notify: z.enum(['bell', 'osc9', 'both', 'none']).default('both'),
  integration_checks: z.enum(['changed', 'all']).default('changed'),
});
export type Config = z.output<typeof configSchema>;

/** Built-in executor profiles; a profile of the same name in the config replaces one. */
export const BUILTIN_PROFILES: Readonly<Record<string, ExecutorProfile>> = {
  claude: {
    agent: 'claude',
    argv: ['claude', '{prompt}'],
    prompt_patterns: ['Do you want to', '\\(y/n\\)', '❯ 1\\. Yes'],
    env: {},
  },
  codex: {
    agent: 'codex',
    argv: ['codex', '{prompt}'],
    prompt_patterns: ['Allow command\\?', '\\(y/n\\)'],
    env: {},
  },
  aider: {
    argv: ['aider', '--yes-always', '--message-file', '{prompt_file}'],
    prompt_patterns: ['\\(Y\\)es/\\(N\\)o'],
    env: {},
  },
  script: { argv: ['sh', '-c', '{run}'], prompt_patterns: [], env: {} },
};

export const DEFAULT_CONFIG: Config = configSchema.parse({});

export function parseConfigText(text: string, source: string): Config {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw badInput(
      'config_invalid',
      `config ${source} is invalid:\n  not valid JSON: ${(error as Error).message}`,
    );
  }
  const parsed = configSchema.safeParse(raw, { reportInput: true });
  if (!parsed.success) {
    const lines = formatIssues(parsed.error).map((l) => `  ${l}`);
    throw badInput('config_invalid', `config ${source} is invalid:\n${lines.join('\n')}`);
  }
  const problems: string[] = [];
  const known = { ...BUILTIN_PROFILES, ...parsed.data.executors };
  if (parsed.data.default_executor && !(parsed.data.default_executor in known))
    problems.push(`  default_executor: unknown executor profile "${parsed.data.default_executor}"`);
  if (problems.length)
    throw badInput('config_invalid', `config ${source} is invalid:\n${problems.join('\n')}`);
  return parsed.data;
}

/** Reads the repo root's config file, or the defaults when there is none. */
export function loadConfig(repoRoot: string): Config {
  const path = join(repoRoot, CONFIG_FILE);
  if (!existsSync(path)) return DEFAULT_CONFIG;
  return parseConfigText(readFileSync(path, 'utf8'), path);
}

export function executorProfiles(config: Config): Record<string, ExecutorProfile> {
  return { ...BUILTIN_PROFILES, ...config.executors };
}
