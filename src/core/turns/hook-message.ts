import { sha256Hex } from '../basics/canonical-json.js';
import { z } from 'zod';
import { ID_PATTERN } from '../basics/ids.js';
import { formatIssues } from '../basics/issues.js';
import type { KernelRecord } from '../records/kernel.js';
import { openAttempt } from '../records/kernel.js';
import { usageSchema } from '../records/usage.js';

// What an agent's hook (the `lanes hook …` subcommand) sends the running coordinator, and
// whether it counts: it must name the lane's current run and open attempt and carry that
// attempt's token. Anything else is refused (and journaled by the caller); nothing moves.

export const HOOK_PROTOCOL = 1;

export const hookMessageSchema = z.strictObject({
  v: z.literal(HOOK_PROTOCOL),
  /**
   * turn-end: the agent finished a turn and waits for the verdict; notification: it waits
   * for the user; session: it started and names its session.
   */
  kind: z.enum(['turn-end', 'notification', 'session']),
  /**
   * The adapter that read the hook input (the registry's name for it). Only said, never
   * trusted: the lane's own profile names its agent, the token binds the message to the
   * attempt. So it is any id here, not an enum to keep in step with the agents.
   */
  agent: z.string().regex(ID_PATTERN),
  task: z.string().regex(ID_PATTERN),
  run_id: z.string().min(1),
  attempt: z.number().int().positive(),
  token: z.string().min(16),
  /** Where the hook ran (the agent's working directory): a turn end counts only from inside its lane. */
  cwd: z.string().min(1),
  session_id: z.string().min(1).nullable(),
  /** The agent's last message of the turn, for the transcript. */
  last_message: z.string().nullable(),
  /** At a turn end: the session's running total, from the agent's session file (issue 27). */
  usage: usageSchema.nullable().optional(),
});
export type HookMessage = z.output<typeof hookMessageSchema>;

export const hookReplySchema = z.discriminatedUnion('verdict', [
  z.strictObject({ verdict: z.literal('stop'), why: z.string() }),
  z.strictObject({ verdict: z.literal('continue'), feedback: z.string().min(1) }),
  z.strictObject({ verdict: z.literal('refused'), reason: z.string() }),
  z.strictObject({ verdict: z.literal('noted') }),
]);
export type HookReply = z.output<typeof hookReplySchema>;

export type ParsedHookMessage = { ok: true; message: HookMessage } | { ok: false; problem: string };

export function parseHookMessage(line: string): ParsedHookMessage {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch (error) {
    return { ok: false, problem: `hook message is not valid JSON: ${(error as Error).message}` };
  }
  const parsed = hookMessageSchema.safeParse(raw);
  if (!parsed.success)
    return { ok: false, problem: `hook message is invalid: ${formatIssues(parsed.error).join('; ')}` };
  return { ok: true, message: parsed.data };
}

/** What the kernel keeps of a hook token. */
export const tokenDigest = sha256Hex;

export type HookRefusal =
  | 'unknown-lane'
  | 'other-lane'
  | 'stale-run'
  | 'stale-attempt'
  | 'bad-token'
  | 'outside-lane'
  | 'not-running';

/**
 * Lanes as the coordinator knows them: each child's current run id and kernel record, and
 * what it sees itself: the lane's real path and whether its executor runs now. A token is
 * a secret only among processes lanes does not start: executors of one Unix user can read
 * each other's (docs/DESIGN.md §11, "Who is trusted"), so a message must also fit these.
 */
export interface LaneFacts {
  runId: string | null;
  kernel: KernelRecord | null;
  /** The lane's path, symlinks resolved; null when it has none. */
  path: string | null;
  /** Its executor's session is running now. */
  running: boolean;
}

const inside = (dir: string, path: string) =>
  path === dir || path.startsWith(dir.endsWith('/') ? dir : `${dir}/`);

/** Accepts a message for the current attempt of its own lane, or names why not. */
export function checkHookMessage(
  message: HookMessage,
  lanes: ReadonlyMap<string, LaneFacts>,
): { ok: true } | { ok: false; reason: HookRefusal } {
  const digest = tokenDigest(message.token);
  const lane = lanes.get(message.task);
  const ownerOfToken = [...lanes].find(([, l]) =>
    l.kernel?.attempts.some((a) => a.hook_token_sha256 === digest),
  )?.[0];
  if (ownerOfToken !== undefined && ownerOfToken !== message.task) return { ok: false, reason: 'other-lane' };
  if (!lane?.kernel || lane.runId === null) return { ok: false, reason: 'unknown-lane' };
  if (message.run_id !== lane.runId || lane.kernel.run_id !== lane.runId)
    return { ok: false, reason: 'stale-run' };
  const open = openAttempt(lane.kernel);
  if (!open || open.n !== message.attempt) return { ok: false, reason: 'stale-attempt' };
  if (open.hook_token_sha256 === null || open.hook_token_sha256 !== digest)
    return { ok: false, reason: 'bad-token' };
  if (lane.path === null || !inside(lane.path, message.cwd)) return { ok: false, reason: 'outside-lane' };
  // (a session's first message can come before lanes holds its session: only a turn end waits on it)
  if (message.kind === 'turn-end' && !lane.running) return { ok: false, reason: 'not-running' };
  return { ok: true };
}
