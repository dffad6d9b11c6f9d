import { createHash } from 'node:crypto';

// Codex runs a hook only once it is trusted, and keeps that trust as a hash of the hook's
// definition under `hooks.state."<key>"` — normally written to the user's config.toml by
// Codex's own /hooks review. lanes trusts its own hook for one session only, on the
// command line, and nothing else: a `-c hooks.state={…}` override names exactly the hook
// the other `-c` adds. (`--dangerously-bypass-hook-trust` would also run every untrusted
// hook of the user's; lanes never passes it.) Measured on Codex 0.169.0: docs/AGENTS.md.

/** Codex's synthetic source path for hooks added with `-c`. */
const SESSION_FLAGS_SOURCE = '/<session-flags>/config.toml';

/** Codex's default timeout of a command hook, part of the hashed definition. */
export const CODEX_DEFAULT_HOOK_TIMEOUT_SECONDS = 600;

export interface CodexCommandHook {
  /** The event as Codex names it in config (`Stop`, `SessionStart`, `PermissionRequest`…). */
  event: string;
  /** The command line Codex runs through the shell. */
  command: string;
  timeoutSeconds?: number;
}

/** `Stop` → `stop`, `SessionStart` → `session_start`: the event's name in trust keys. */
export function codexEventLabel(event: string): string {
  return event.replace(/(?<!^)([A-Z])/g, '_$1').toLowerCase();
}

/** A TOML basic string (JSON's escapes are a subset of TOML's). */
const tomlString = (text: string): string => JSON.stringify(text);

/**
 * The hash Codex records for a command hook with no matcher: sha256 over the compact JSON
 * of `{event_name, hooks: [{async, command, timeout, type}]}` with the keys in that order.
 */
export function codexHookTrustHash({ event, command, timeoutSeconds }: CodexCommandHook): string {
  const identity = {
    event_name: codexEventLabel(event),
    hooks: [
      {
        async: false,
        command,
        timeout: timeoutSeconds ?? CODEX_DEFAULT_HOOK_TIMEOUT_SECONDS,
        type: 'command',
      },
    ],
  };
  return `sha256:${createHash('sha256').update(JSON.stringify(identity)).digest('hex')}`;
}

/**
 * The `-c` values (without the `-c` flags) that add `hooks` for this session and trust
 * exactly them: one `hooks.<Event>=[…]` per hook (each the only group of its event in the
 * session layer, so its key ends `:0:0`), then one inline `hooks.state={…}` table. The
 * inline table matters: a dotted `hooks.state."<key>".trusted_hash` does not reach Codex,
 * because the key itself contains dots.
 */
export function codexHookOverrides(hooks: readonly CodexCommandHook[]): string[] {
  const seen = new Set<string>();
  const adds: string[] = [];
  const states: string[] = [];
  for (const hook of hooks) {
    if (seen.has(hook.event)) throw new Error(`codexHookOverrides: two hooks for ${hook.event}`);
    seen.add(hook.event);
    const timeout = hook.timeoutSeconds ?? CODEX_DEFAULT_HOOK_TIMEOUT_SECONDS;
    adds.push(
      `hooks.${hook.event}=[{hooks=[{type="command",command=${tomlString(hook.command)},timeout=${timeout}}]}]`,
    );
    const key = `${SESSION_FLAGS_SOURCE}:${codexEventLabel(hook.event)}:0:0`;
    states.push(`${tomlString(key)}={trusted_hash=${tomlString(codexHookTrustHash(hook))}}`);
  }
  return states.length === 0 ? [] : [...adds, `hooks.state={${states.join(',')}}`];
}
