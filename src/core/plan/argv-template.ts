// Filling an executor profile's argv template (docs/DECISIONS.md "Executor preferences").
// Placeholders are replaced inside each argument, and an argument stays one argument:
// nothing is ever re-split by a shell. `{model}`, `{effort}`, `{permission_mode}` and
// `{approval_policy}` are optional: an argument holding one that is unset is left out,
// and so is the flag just before it (`--model {model}` goes as a pair), so an unset value
// never becomes an empty argument that the agent would read as its value or its prompt.

export const OPTIONAL_PLACEHOLDERS = ['model', 'effort', 'permission_mode', 'approval_policy'] as const;
export type OptionalPlaceholder = (typeof OPTIONAL_PLACEHOLDERS)[number];

export const PLACEHOLDER =
  /\{(prompt_file|prompt|task|lane|run|model|effort|permission_mode|approval_policy)\}/g;

export type TemplateValues = Partial<Record<string, string | undefined>>;

/** `--model`, `-c`: an option that takes the next argument as its value (no `=`, no placeholder). */
function isBareFlag(arg: string): boolean {
  return /^-{1,2}[A-Za-z0-9]/.test(arg) && !arg.includes('=') && !/\{[a-z_]+\}/.test(arg);
}

export function fillTemplate(argv: readonly string[], values: TemplateValues): string[] {
  const out: string[] = [];
  // Index into `out` of a bare flag that came straight before the current argument.
  let flagAt: number | null = null;
  for (const arg of argv) {
    const unset = [...arg.matchAll(PLACEHOLDER)].some(
      ([, key]) => (OPTIONAL_PLACEHOLDERS as readonly string[]).includes(key!) && !values[key!],
    );
    if (unset) {
      if (flagAt !== null) out.splice(flagAt, 1);
      flagAt = null;
      continue;
    }
    flagAt = isBareFlag(arg) ? out.length : null;
    out.push(arg.replace(PLACEHOLDER, (_, key: string) => values[key] ?? ''));
  }
  return out;
}
