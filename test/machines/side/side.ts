import { execFileSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import type { MachineOp, OpArgs, OpValues } from '../../../src/machines/protocol.js';
import { TMUX_SOCKET } from '../../../src/machines/protocol.js';
import { tempDir } from '../../helpers/repo.js';

// The side script as a machine runs it: the real bundle (`npm run build` makes it), a real
// process per op, one JSON request on stdin, one JSON line out. No ssh: the script is what
// runs on a machine, ssh only carries its stdin and stdout.

export const SIDE = join(import.meta.dirname, '..', '..', '..', 'dist', 'lanes', 'machine.js');

export interface Raw {
  exitCode: number;
  stdout: string;
  stderr: string;
  answer: { ok: boolean; value?: unknown; code?: string; message?: string } | null;
}

/** The side script with `input` on stdin, as it answered. */
export async function runSide(
  input: string,
  argv: readonly string[] = ['op'],
  env: Record<string, string> = {},
): Promise<Raw> {
  const result = await execa(process.execPath, [SIDE, ...argv], { input, env, reject: false });
  const stdout = String(result.stdout);
  let answer: Raw['answer'] = null;
  try {
    answer = JSON.parse(stdout) as Raw['answer'];
  } catch {
    answer = null;
  }
  return { exitCode: result.exitCode ?? -1, stdout, stderr: String(result.stderr), answer };
}

export interface Machine {
  root: string;
  repo: string;
  /** `env`: set for this op's process on top of the test's own. */
  call<Op extends MachineOp>(op: Op, args: OpArgs<Op>, env?: Record<string, string>): Promise<OpValues[Op]>;
}

/** A machine's root in a temporary folder and the repository id its cache is named by. */
export function machine(repo: string): Machine {
  const root = join(realpathSync(tempDir('lanes-side-')), 'root');
  return {
    root,
    repo,
    async call(op, args, env = {}) {
      const raw = await runSide(JSON.stringify({ op, root, repo, args }), ['op'], env);
      if (raw.exitCode !== 0 || raw.answer?.ok !== true)
        throw new Error(`${op} failed (exit ${raw.exitCode}): ${raw.stdout}${raw.stderr}`);
      return raw.answer.value as never;
    },
  };
}

/** The names of the sessions on lanes' tmux server (`tmux -L lanes ls`); none when it does not run. */
export function tmuxNames(): string[] {
  try {
    return execFileSync('tmux', ['-L', TMUX_SOCKET, 'ls', '-F', '#{session_name}'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .split('\n')
      .filter(Boolean);
  } catch {
    return [];
  }
}

/** A batch id of this test run's own (tests of other helpers share lanes' tmux server). */
export function batchId(label: string): string {
  return `${label}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
}
