import { existsSync, readFileSync } from 'node:fs';
import type { ExitInfo } from './host.js';

// Every executor runs under a small sh wrapper that records its exit status in a file in
// the state directory. The file outlives lanes: after a crash, `resume` reads it and
// knows the executor ended (and how) instead of running the work again.

// The status is written in place, not to a temporary file renamed over it: `printf` of a few
// bytes is one write(2), so a reader sees an empty file or the whole line, and the line's
// newline tells the two apart. (An `mv` was one more process for every executor.)
const wrapper = (linger: string): string =>
  ['"$@"', 'status=$?', 'printf "%s\\n" "$status" > "$0"', linger, 'exit $status'].filter(Boolean).join('; ');

/**
 * argv that runs `argv` exactly (no re-splitting) and writes its status to `statusPath`.
 * `lingerSeconds`: how long the wrapper waits before it exits. A pty whose session leader
 * exits with output still unread loses all but a few KB of it in the kernel (docs/DECISIONS.md
 * "Pane output"); the pane's reader gets that long to catch up.
 */
export function wrapWithExitStatus(argv: readonly string[], statusPath: string, lingerSeconds = 0): string[] {
  const linger = lingerSeconds > 0 ? `sleep ${lingerSeconds}` : '';
  return ['sh', '-c', wrapper(linger), statusPath, ...argv];
}

/** The recorded exit, or null while the executor has not ended (a signal shows as 128+n, as in sh). */
export function readExitStatus(statusPath: string): ExitInfo | null {
  if (!existsSync(statusPath)) return null;
  const text = readFileSync(statusPath, 'utf8');
  if (!/^\d+\n$/.test(text)) return null; // (empty: the wrapper is writing it)
  const code = Number(text.trimEnd());
  return { code, signal: null };
}
