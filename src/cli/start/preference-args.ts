import { badInput } from '../../core/basics/errors.js';
import { ID_PATTERN } from '../../core/basics/ids.js';
import type { CommandLinePreferences } from '../../core/settings/preferences.js';
import { effortSchema, modelSchema, valueProblem } from '../../core/plan/preference-values.js';

// --executor, --model and --effort: checked like the same values in a plan or a config.

export function preferenceArgs(
  command: string,
  values: { executor?: string | boolean; model?: string | boolean; effort?: string | boolean },
): Omit<CommandLinePreferences, 'parallel'> {
  const out: Omit<CommandLinePreferences, 'parallel'> = {};
  const { executor, model, effort } = values;
  if (typeof executor === 'string') {
    if (!ID_PATTERN.test(executor))
      throw badInput(
        'usage',
        `lanes ${command}: --executor "${executor.slice(0, 80)}" is not a profile name`,
      );
    out.executor = executor;
  }
  for (const [name, value, schema] of [
    ['model', model, modelSchema],
    ['effort', effort, effortSchema],
  ] as const) {
    if (typeof value !== 'string') continue;
    const problem = valueProblem(schema, value);
    if (problem) throw badInput('usage', `lanes ${command}: --${name} "${value.slice(0, 80)}" ${problem}`);
    out[name] = value;
  }
  return out;
}
