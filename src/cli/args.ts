import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { z } from 'zod';
import { badInput } from '../core/basics/errors.js';
import { ID_PATTERN } from '../core/basics/ids.js';

// Command-line parsing: node's parseArgs (strict: unknown options are errors), then zod
// for values. Every failure is a usage error (exit 2) that names the option.

export type Options = NonNullable<ParseArgsConfig['options']>;

export function parseCommand<O extends Options>(
  command: string,
  argv: string[],
  options: O,
  maxPositionals: number,
) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw badInput(
      'usage',
      `lanes ${command}: ${(error as Error).message.replace(/\. To specify a positional.*$/s, '')}`,
    );
  }
  if (parsed.positionals.length > maxPositionals)
    throw badInput('usage', `lanes ${command}: unexpected argument "${parsed.positionals[maxPositionals]}"`);
  return parsed;
}

export function batchIdArg(command: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!ID_PATTERN.test(value) || value.includes('\0'))
    throw badInput('usage', `lanes ${command}: "${value.slice(0, 200)}" is not a valid batch id`);
  return value;
}

export function positiveIntArg(command: string, name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const parsed = z.coerce.number().int().positive().safeParse(value);
  if (!/^\d+$/.test(value) || !parsed.success)
    throw badInput('usage', `lanes ${command}: --${name} expects a whole number > 0, got "${value}"`);
  return parsed.data;
}
