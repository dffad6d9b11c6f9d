import { closeSync, constants, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { CheckRun } from '../core/records/kernel.js';
import { tailOf } from '../core/records/kernel.js';
import type { AcceptanceCheck } from '../core/plan/plan.js';
import { processHelper } from '../git/runner/git-helper.js';

// Runs acceptance checks in a folder: an argv without a shell, a string with `sh -c`.
// Output (stdout and stderr interleaved) goes to a log file, bounded, and its tail is
// kept for the rework prompt. A check that outlives its timeout is killed with its whole
// process group, so a forgotten background child cannot keep the check alive.

const LOG_LIMIT_BYTES = 1024 * 1024;
const TAIL_BYTES = 16 * 1024;

export async function runCheck(
  cwd: string,
  check: AcceptanceCheck,
  logPath: string | null,
): Promise<CheckRun> {
  const [file, ...args] = typeof check.run === 'string' ? ['sh', '-c', check.run] : check.run;
  const started = Date.now();
  const helper = processHelper();
  if (helper) {
    // Started by the helper process (which makes the log's folder too): a wave of QA runs
    // does not block the TUI in fork().
    const env = Object.fromEntries(
      Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined),
    );
    const result = await helper.check({
      checkId: check.id,
      cwd,
      file: file as string,
      args,
      env: { ...env, LANES_CHECK: check.id },
      logPath,
      logLimit: LOG_LIMIT_BYTES,
      tailBytes: TAIL_BYTES,
      timeoutMs: check.timeout_ms,
    });
    return {
      id: check.id,
      exit_code: result.exitCode,
      timed_out: result.timedOut,
      duration_ms: Date.now() - started,
      log_path: logPath,
      tail: tailOf(result.tail),
    };
  }
  // (execa and its many modules load only when there is no process helper to run the check)
  const { execa } = await import('execa');
  let fd: number | null = null;
  if (logPath) {
    mkdirSync(dirname(logPath), { recursive: true });
    // (never through a symbolic link planted in the state dir: ELOOP instead)
    const { O_WRONLY, O_CREAT, O_TRUNC, O_NOFOLLOW } = constants;
    fd = openSync(logPath, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0o644);
  }
  let written = 0;
  let tail = '';
  const take = (chunk: Buffer | string) => {
    const text = chunk.toString();
    tail = (tail + text).slice(-TAIL_BYTES);
    if (fd !== null && written < LOG_LIMIT_BYTES) {
      const part = Buffer.from(text).subarray(0, LOG_LIMIT_BYTES - written);
      writeSync(fd, part);
      written += part.length;
    }
  };
  let timedOut = false;
  const child = execa(file as string, args, {
    cwd,
    reject: false,
    stdin: 'ignore',
    all: true,
    buffer: false,
    detached: true,
    env: { LANES_CHECK: check.id },
  });
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    } catch {
      child.kill('SIGKILL');
    }
  }, check.timeout_ms);
  // The check ends with its process: a background child it left behind (which would hold
  // the output pipe open until it ends or the timeout fires) is killed with the group.
  child.once('exit', () => {
    clearTimeout(timer);
    try {
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // the group is already gone
    }
  });
  child.all?.on('data', take);
  const result = await child;
  clearTimeout(timer);
  if (result.failed && result.exitCode === undefined && !timedOut) take(`\n${result.message}\n`);
  if (timedOut) take(`\n[lanes] check ${check.id} timed out after ${check.timeout_ms} ms and was killed\n`);
  if (fd !== null) {
    if (written >= LOG_LIMIT_BYTES) writeSync(fd, `\n[lanes] log cut at ${LOG_LIMIT_BYTES} bytes\n`);
    closeSync(fd);
  }
  return {
    id: check.id,
    exit_code: timedOut ? null : (result.exitCode ?? null),
    timed_out: timedOut,
    duration_ms: Date.now() - started,
    log_path: logPath,
    tail: tailOf(tail),
  };
}

export async function runChecks(
  cwd: string,
  checks: readonly AcceptanceCheck[],
  logPathFor: (check: AcceptanceCheck) => string | null,
): Promise<CheckRun[]> {
  const results: CheckRun[] = [];
  for (const check of checks) results.push(await runCheck(cwd, check, logPathFor(check)));
  return results;
}
