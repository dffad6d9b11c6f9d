import type { z } from 'zod';

// Turns zod issues into one line each: `children[2].scope: must not be empty`.
// zod's own wording is close to this, but names neither the field path in our form nor
// unknown keys the way a user wants to read them.

export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}

export function describeIssue(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.length === 1
        ? `unknown field "${issue.keys[0]}"`
        : `unknown fields ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
    case 'too_small':
      if (issue.origin === 'array') return 'must not be empty';
      if (issue.origin === 'string') return 'must not be empty';
      if (issue.origin === 'number')
        return `must be ${issue.inclusive ? '>=' : '>'} ${String(issue.minimum)}`;
      return issue.message;
    case 'invalid_type': {
      // zod 4 reports a missing field as invalid_type with input undefined.
      if (issue.input === undefined) return `required (expected ${issue.expected})`;
      return `expected ${issue.expected}, got ${describeValue(issue.input)}`;
    }
    default:
      return issue.message;
  }
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number' && !Number.isInteger(value)) return `number ${value}`;
  return typeof value;
}

export function formatIssues(error: z.ZodError, prefix = ''): string[] {
  return error.issues.map((issue) => {
    const path = formatPath(issue.path);
    const where = [prefix, path].filter(Boolean).join(path.startsWith('[') ? '' : '.');
    return `${where || '(top level)'}: ${describeIssue(issue)}`;
  });
}
