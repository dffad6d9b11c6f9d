import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { LaunchSpec } from '../host.js';

// The per-attempt wrapper script a lane tab runs (docs/HERDR.md, "One lane, one tab", step 3). `pane run`
// joins its arguments with spaces and types them into the user's shell (which may be fish
// or nu), so lanes never types the executor's argv: it writes a POSIX sh script next to
// the status file, with every argument single-quoted, and types only `sh '<script>'`.
// The script records the exit status in the status file (the authority, read by polling)
// and prints a marker for `pane wait-output` (a second, faster signal). The marker is not
// in the typed line, so a wait cannot match the shell's echo of it.

export interface WrapperFiles {
  script: string;
  /** The wrapper's pid: its process group leads the executor (a job of the tab's shell). */
  pid: string;
  /** Made with mkdir by the first run: a `pane run` retried after a timeout starts nothing twice. */
  started: string;
  /** `LANES_<hash>_EXIT`; the script prints `<marker>=<status>` when the executor ends. */
  marker: string;
}

/** The files of one attempt, all derived from its status path (so a restart finds them again). */
export function wrapperFiles(statusPath: string): WrapperFiles {
  const base = statusPath.replace(/\.status$/, '');
  const hash = createHash('sha256').update(statusPath).digest('hex').slice(0, 12);
  return {
    script: `${base}.herdr.sh`,
    pid: `${base}.pid`,
    started: `${base}.started`,
    marker: `LANES_${hash}_EXIT`,
  };
}

/** One shell word for any string: single quotes, with `'` written as `'\''`. Newlines stay literal. */
export function shQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function wrapperScript(spec: LaunchSpec, files: WrapperFiles): string {
  const status = spec.statusPath;
  const exports = Object.entries(spec.env)
    .filter(([name]) => ENV_NAME.test(name))
    .map(([name, value]) => `export ${name}=${shQuote(value)}`);
  return [
    '#!/bin/sh',
    `# lanes: executor of ${spec.taskId.replace(/[^\w.-]/g, '?')}, attempt ${spec.attempt}. Generated; runs the argv below exactly.`,
    `mkdir ${shQuote(files.started)} 2>/dev/null || { echo 'lanes: this attempt already started' >&2; exit 0; }`,
    `echo $$ > ${shQuote(files.pid)}`,
    ...exports,
    // A caught signal is reset to the default in the executor (unlike an ignored one), so
    // ctrl-c or the tab's hangup still reach it, while the wrapper lives on to record its status.
    "trap ':' INT HUP TERM",
    `cd ${shQuote(spec.cwd)} && ${spec.argv.map(shQuote).join(' ')}`,
    'status=$?',
    `printf '%s\\n' "$status" > ${shQuote(`${status}.tmp`)} && mv -f ${shQuote(`${status}.tmp`)} ${shQuote(status)}`,
    `printf '\\n[lanes] executor ended: %s=%s\\n' ${shQuote(files.marker)} "$status"`,
    '',
  ].join('\n');
}

/** Writes the wrapper for `spec`; returns its files and the one line to type into the tab's shell. */
export function writeWrapper(spec: LaunchSpec): { files: WrapperFiles; command: string } {
  if (spec.argv.length === 0) throw new Error(`executor argv of ${spec.taskId} is empty`);
  const files = wrapperFiles(spec.statusPath);
  mkdirSync(dirname(files.script), { recursive: true });
  writeFileSync(files.script, wrapperScript(spec, files), { mode: 0o700 });
  chmodSync(files.script, 0o700);
  return { files, command: `sh ${shQuote(files.script)}` };
}

/** The wrapper's pid once it started, else null. */
export function readWrapperPid(files: WrapperFiles): number | null {
  if (!existsSync(files.pid)) return null;
  const text = readFileSync(files.pid, 'utf8').trim();
  return /^\d+$/.test(text) ? Number(text) : null;
}

/** The regex `pane wait-output` waits for. */
export function markerRegex(files: WrapperFiles): string {
  return `${files.marker}=[0-9]+`;
}

/** The wrapper's pid while it still runs this attempt's script (a reused pid does not count). */
export function liveWrapperPid(files: WrapperFiles): number | null {
  const pid = readWrapperPid(files);
  if (pid === null) return null;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return null;
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(files.script) ? pid : null;
  } catch {
    return existsSync('/proc/self') ? null : pid; // no /proc at all: the signal test is all there is
  }
}
