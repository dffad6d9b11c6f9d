import { z } from 'zod';
import { agentNameSchema } from '../basics/agent-names.js';
import { badInput } from '../basics/errors.js';
import { idSchema, LOCAL_MACHINE, machineNameSchema } from '../basics/ids.js';
import { formatIssues } from '../basics/issues.js';
import { effortSchema, modelSchema, permissionSchema } from '../plan/preference-values.js';
import { acceptanceCheckSchema } from '../plan/plan.js';
import { scopeEntryProblem } from '../plan/scope.js';

// lanes.config.json at the repository root (DESIGN §2.2). Optional; every field has a default.

export const CONFIG_FILE = 'lanes.config.json';

const noNul = (s: string) => !s.includes('\0');

/**
 * An executor profile: an argv template. Placeholders `{prompt}`, `{prompt_file}`,
 * `{task}`, `{lane}`, `{run}` (the child's `run:` string), and the optional `{model}`,
 * `{effort}`, `{permission_mode}`, `{approval_policy}` are replaced inside each argument;
 * no shell runs unless argv[0] names one. An unset optional one drops its argument and the
 * flag before it (src/core/argv-template.ts).
 */
export const profileSchema = z.strictObject({
  argv: z
    .array(z.string().refine(noNul, { message: 'must not contain a NUL byte' }))
    .min(1)
    .refine((argv) => argv[0] !== '', { message: 'argv[0] (the program) must not be empty' }),
  /** Which agent adapter launches and observes it (src/agents); a plain command when unset. */
  agent: agentNameSchema.optional(),
  model: modelSchema.optional(),
  effort: effortSchema.optional(),
  /** The agent's own permission word: Claude Code's --permission-mode, Codex's --sandbox. */
  permission_mode: permissionSchema.optional(),
  /** Codex's approval policy (its `approval_policy` config key). */
  approval_policy: permissionSchema.optional(),
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

/**
 * A profile named after a built-in one and without `argv` extends it: `{"claude": {"model":
 * "opus"}}` keeps the built-in argv (and whatever lanes adds to it) and sets the model.
 */
function extendBuiltins(raw: unknown): unknown {
  // (called at parse time, so BUILTIN_PROFILES below is there by then)
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return raw;
  const out: Record<string, unknown> = {};
  for (const [name, profile] of Object.entries(raw)) {
    const builtin = Object.hasOwn(BUILTIN_PROFILES, name) ? BUILTIN_PROFILES[name] : undefined;
    const extend = builtin && profile !== null && typeof profile === 'object' && !('argv' in profile);
    out[name] = extend ? { ...builtin, ...profile } : profile;
  }
  return out;
}

/**
 * A machine lanes runs lanes on (docs/DECISIONS.md, "Machines: placement"): `ssh` is a
 * destination as ssh(1) takes it, `root` where lanes keeps its files there, `slots` how many
 * lanes it runs at once. `{ "name": "local", "slots": N }` is the coordinator's own machine.
 */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const machineSchema = z.strictObject({
  name: machineNameSchema,
  ssh: z
    .string()
    .trim()
    .min(1)
    .refine(noNul, { message: 'must not contain a NUL byte' })
    // (ssh would read a leading dash as an option of its own)
    .refine((s) => !s.startsWith('-'), { message: 'must not start with "-"' })
    .optional(),
  slots: z.number().int().positive(),
  root: z.string().trim().min(1).refine(noNul, { message: 'must not contain a NUL byte' }).optional(),
  /** Environment variables set for its lanes there (names as a shell takes them: KEY=value). */
  env: z
    .record(z.string(), z.string().refine(noNul, { message: 'must not contain a NUL byte' }))
    .superRefine((env, ctx) => {
      for (const key of Object.keys(env))
        if (!ENV_NAME.test(key))
          ctx.addIssue({
            code: 'custom',
            path: [key],
            message: `must be a variable name (${ENV_NAME.source})`,
          });
    })
    .optional(),
});
export type MachineConfig = z.output<typeof machineSchema>;

export const DEFAULT_MACHINE_TIMEOUT_MINUTES = 10;

export const configSchema = z.strictObject({
  executors: z.preprocess(extendBuiltins, z.record(idSchema, profileSchema)).default({}),
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
  /** The token budget when the plan sets none (the plan's budget.max_tokens wins). */
  budget: z.strictObject({ max_tokens: z.number().int().positive().optional() }).default({}),
  /** The whole batch's checks when the plan has no `final_checks` (e.g. the full test suite). */
  final_checks: z.array(acceptanceCheckSchema).default([]),
  /** The machines lanes run on (absent: every lane is local, as without machines). */
  machines: z.array(machineSchema).min(1).optional(),
  /** How lanes runs OpenSSH: an argv prefix (like git's core.sshCommand). */
  ssh_command: z
    .array(z.string().min(1).refine(noNul, { message: 'must not contain a NUL byte' }))
    .min(1)
    .default(['ssh']),
  /** Minutes a machine may not answer before its lanes park `machine_lost: <name>`. */
  machine_timeout: z.number().positive().default(DEFAULT_MACHINE_TIMEOUT_MINUTES),
});
export type Config = z.output<typeof configSchema>;

/** Built-in executor profiles; a profile of the same name in the config replaces one (or, without argv, extends it). */
export const BUILTIN_PROFILES: Readonly<Record<string, ExecutorProfile>> = {
  claude: {
    agent: 'claude',
    argv: [
      'claude',
      '--model',
      '{model}',
      '--effort',
      '{effort}',
      '--permission-mode',
      '{permission_mode}',
      '{prompt}',
    ],
    prompt_patterns: ['Do you want to', '\\(y/n\\)', '❯ 1\\. Yes'],
    env: {},
  },
  codex: {
    agent: 'codex',
    argv: [
      'codex',
      '--model',
      '{model}',
      '-c',
      'model_reasoning_effort="{effort}"',
      '--sandbox',
      '{permission_mode}',
      // (`codex exec` has no --ask-for-approval; the config key works in both modes)
      '-c',
      'approval_policy="{approval_policy}"',
      '{prompt}',
    ],
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
  problems.push(...machineProblems(parsed.data.machines ?? []).map((p) => `  ${p}`));
  if (problems.length)
    throw badInput('config_invalid', `config ${source} is invalid:\n${problems.join('\n')}`);
  return parsed.data;
}

export function executorProfiles(config: Config): Record<string, ExecutorProfile> {
  return { ...BUILTIN_PROFILES, ...config.executors };
}

/** What a schema cannot say of `machines`: unique names, ssh for every machine but local. */
function machineProblems(machines: readonly MachineConfig[]): string[] {
  const problems: string[] = [];
  const first = new Map<string, number>();
  machines.forEach((m, i) => {
    const seen = first.get(m.name);
    if (seen !== undefined)
      problems.push(`machines[${i}].name: duplicate machine name "${m.name}" (also machines[${seen}])`);
    else first.set(m.name, i);
    if (m.name === LOCAL_MACHINE && m.ssh !== undefined)
      problems.push(`machines[${i}].ssh: the "local" machine is the coordinator's own: it has no ssh`);
    if (m.name === LOCAL_MACHINE && (m.root !== undefined || m.env !== undefined))
      problems.push(`machines[${i}]: the "local" machine takes only "name" and "slots"`);
    if (m.name !== LOCAL_MACHINE && m.ssh === undefined)
      problems.push(`machines[${i}].ssh: required (machine "${m.name}")`);
  });
  return problems;
}
