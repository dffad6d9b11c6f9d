// Typed errors. Every error lanes raises on purpose carries a stable `code` (the reason
// strings of docs/DESIGN.md where one exists) and the exit code the CLI ends with.

/** Exit codes of DESIGN §9. */
export const ExitCode = {
  ok: 0,
  unexpected: 1,
  badInput: 2,
  needsHuman: 3,
  failed: 4,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export type ErrorCode =
  | 'usage'
  | 'plan_invalid'
  | 'config_invalid'
  | 'state_invalid'
  | 'state_symlink'
  | 'state_missing'
  | 'report_immutable'
  | 'lock_held'
  | 'not_a_repository'
  | 'git_failed'
  | 'git_too_old'
  | 'not_implemented'
  | 'batch_branch_checked_out'
  | 'batch_exists'
  | 'preflight_failed'
  // Executor preferences (src/core/preferences.ts) and the executor preflight.
  | 'directive_invalid'
  | 'executor_missing'
  | 'land_refused'
  | 'clean_refused'
  // A lane branch deleted or moved by someone else while lanes committed its delivery.
  | 'lane_branch_moved'
  | 'hook_invalid'
  // lanes init: a file it would write is there already.
  | 'file_exists'
  // lanes plan draft: the agent gave no answer, or changed the work tree.
  | 'draft_failed'
  | 'draft_changed_tree';

/**
 * An error lanes raises on purpose. `Code` is one of the codes above, or an adapter's own
 * (a host's codes live with the host: `herdr_too_old` in src/hosts/herdr), so adding an
 * adapter adds no line here.
 */
export class LanesError<Code extends string = ErrorCode> extends Error {
  override readonly name: string = 'LanesError';
  constructor(
    readonly code: Code,
    message: string,
    readonly exitCode: ExitCode = ExitCode.badInput,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Bad input of any kind: exit 2, the message names what is wrong. */
export function badInput(code: ErrorCode, message: string): LanesError {
  return new LanesError(code, message, ExitCode.badInput);
}

/** Any of lanes' errors: its code may be an adapter's, so it is only known to be a string. */
export function isLanesError(value: unknown): value is LanesError<string> {
  return value instanceof LanesError;
}
