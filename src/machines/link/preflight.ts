import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MachineLink } from './machine-link.js';
import { shellLine } from './shell-quote.js';

// What a machine must have before lanes puts a lane there (checked, never installed behind
// the user's back): it answers with BatchMode, git ≥ 2.38 (worktrees, merge-tree), node (the
// side script and its hook), tmux (the sessions), each executor program, a writable root.

export interface PreflightResult {
  ok: boolean;
  reason?: string;
}

const GIT_AT_LEAST = [2, 38];

function gitTooOld(version: string | null): boolean {
  const match = /(\d+)\.(\d+)/.exec(version ?? '');
  if (!match) return true;
  const [major, minor] = [Number(match[1]), Number(match[2])];
  return major < GIT_AT_LEAST[0]! || (major === GIT_AT_LEAST[0] && minor < GIT_AT_LEAST[1]!);
}

export async function preflightMachine(
  link: MachineLink,
  programs: readonly string[],
  needsHook = false,
): Promise<PreflightResult> {
  let hello;
  try {
    hello = await link.connect();
  } catch (error) {
    return {
      ok: false,
      reason: error instanceof Error ? error.message.replace(/^machine \S+: /, '') : String(error),
    };
  }
  const { git, tmux } = hello.versions;
  if (git === null) return { ok: false, reason: 'git is not installed there' };
  if (gitTooOld(git)) return { ok: false, reason: `git ${git} there: lanes needs git 2.38 or later` };
  if (tmux === null) return { ok: false, reason: 'tmux is not installed there' };
  const check = [
    'sh',
    '-c',
    'cd "$1" && shift && { : > .lanes-write-probe && rm -f .lanes-write-probe || echo "root:"; } && for p; do command -v "$p" >/dev/null 2>&1 || echo "missing:$p"; done',
    'sh',
    link.root,
    ...programs,
  ];
  const r = await link.connection.run(shellLine(check));
  const lines = r.stdout.split('\n').filter((l) => l !== '');
  if (lines.includes('root:')) return { ok: false, reason: `its root ${link.root} is not writable` };
  const missing = lines.filter((l) => l.startsWith('missing:')).map((l) => l.slice('missing:'.length));
  if (missing.length) return { ok: false, reason: `not found there: ${missing.join(', ')}` };
  if (r.exitCode !== 0) return { ok: false, reason: r.stderr.trim() || `exit ${r.exitCode}` };
  if (needsHook && !(await forwardsSockets(link)))
    return {
      ok: false,
      reason:
        'its sshd refuses a socket forward (an agent hook needs AllowStreamLocalForwarding and AllowTcpForwarding yes or remote)',
    };
  return { ok: true };
}

/** Whether the machine's sshd takes `ssh -R <socket>:<socket>` (the agents' hook socket). */
async function forwardsSockets(link: MachineLink): Promise<boolean> {
  const dir = `${link.root}/sock`;
  const probe = `${dir}/probe-${process.pid}.sock`;
  await link.connection.run(
    shellLine(['sh', '-c', 'umask 077 && mkdir -p "$1" && chmod 700 "$1"', 'sh', dir]),
  );
  // (the local end is only dialled when something connects there: none is needed)
  const spec = `${probe}:${join(tmpdir(), `lanes-probe-${process.pid}.sock`)}`;
  try {
    await link.connection.forward(spec);
  } catch {
    return false;
  } finally {
    await link.connection.cancelForward(spec).catch(() => undefined);
    await link.connection.run(shellLine(['rm', '-f', probe])).catch(() => undefined);
  }
  return true;
}
