import { closeSync, constants, lstatSync, openSync, readFileSync, writeSync } from 'node:fs';
import { basename, dirname, isAbsolute, relative, sep } from 'node:path';
import type { MachineClient } from '../../machines/link/machine-client.js';
import { tmuxSafe } from '../../machines/protocol.js';
import type { LaunchSpec } from '../host.js';

// Where an attempt of a lane on a machine keeps its files there:
// `<root>/runs/<batch>/<child>/<run>/` (a run of its own: a child run again in the batch starts
// at attempt 1 again, and must not find the old run's status file) (the prompt, the transcript its tmux session appends to, the status file its exit wrapper
// writes). The coordinator keeps the same files in the child's log folder; what the
// executor is handed of them (its argv, its environment) is sent over and renamed, and what
// it writes is brought back into the local ones.

/** The prefix every session of a batch's child has (its run and attempt number follow it). */
export function lanePrefix(batch: string, child: string): string {
  return tmuxSafe(`lanes-${batch}-${child}-`);
}

/**
 * Whether `name` is an attempt's session of the child with prefix `prefix`: a run id
 * (`run-…`, newRunId) and a number follow it, not the rest of child `<child>-2`'s name.
 */
export function isAttemptOf(name: string, prefix: string): boolean {
  return name.startsWith(prefix) && /^run-[A-Za-z0-9_-]*-\d+$/.test(name.slice(prefix.length));
}

export interface RemoteFiles {
  /** The attempt's run folder on the machine. */
  dir: string;
  log: string;
  status: string;
}

export function remoteFiles(client: MachineClient, batch: string, spec: LaunchSpec): RemoteFiles {
  const dir = `${client.root}/runs/${batch}/${spec.taskId}/${tmuxSafe(spec.runId)}`;
  return { dir, log: `${dir}/${basename(spec.logPath)}`, status: `${dir}/${basename(spec.statusPath)}` };
}

/** A file of the child's log folder (the prompt), the only local files a remote executor is handed. */
function localFileUnder(folder: string, value: string): boolean {
  if (!isAbsolute(value)) return false;
  const rel = relative(folder, value);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) return false;
  try {
    return lstatSync(value).isFile(); // (never through a link planted in the state dir)
  } catch {
    return false;
  }
}

/**
 * The argv and environment of `spec` as the machine runs them: every element that names a
 * file of the log folder is written to the run folder (`file.write`) and named there
 * instead; the hook socket is the one forwarded to `<root>/sock/<batch>.sock`. Nothing of
 * the coordinator's own environment goes along (the machine's user has an environment of its own).
 */
export async function sendLaunch(
  client: MachineClient,
  batch: string,
  spec: LaunchSpec,
  files: RemoteFiles,
): Promise<{ argv: string[]; env: Record<string, string> }> {
  const folder = dirname(spec.logPath);
  const sent = new Map<string, string>();
  const send = async (value: string): Promise<string> => {
    if (!localFileUnder(folder, value)) return value;
    const known = sent.get(value);
    if (known) return known;
    const remote = `${files.dir}/${relative(folder, value).split(sep).join('/')}`;
    const mode = lstatSync(value).mode & 0o777;
    await client.call('file.write', { path: remote, base64: readFileSync(value).toString('base64'), mode });
    sent.set(value, remote);
    return remote;
  };
  const argv: string[] = [];
  for (const arg of spec.argv) argv.push(await send(arg));
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(spec.env)) env[key] = await send(value);
  if (env.LANES_HOOK_SOCKET !== undefined) env.LANES_HOOK_SOCKET = `${client.root}/sock/${batch}.sock`;
  return { argv, env };
}

/** Writes an exit status as the exit wrapper does (`<code>\n`, in place, never through a link). */
export function writeLocalStatus(path: string, text: string): void {
  const { O_WRONLY, O_CREAT, O_TRUNC, O_NOFOLLOW } = constants;
  const fd = openSync(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0o644);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}
