import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { runChecks } from '../../qa/check-runner.js';
import { prepareCheckout } from '../../qa/lane-setup.js';
import type { OpValues, ParsedOpArgs } from '../protocol.js';
import { insideRoot } from './place.js';
import type { Place } from './place.js';

// QA on the machine: the acceptance checks and a lane's setup run where its files are, by
// the same runner as a local lane's (src/qa); their logs come back in the answer for the
// coordinator to keep where it keeps a local lane's.

function readLog(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return ''; // (a check that did not start wrote none)
  }
}

/** A folder under the root for logs that only come back (removed once read). */
function scratchLogs(place: Place): string {
  const dir = join(place.root, 'tmp');
  mkdirSync(dir, { recursive: true });
  return mkdtempSync(join(dir, 'logs-'));
}

export async function runChecksOp(
  { cwd, checks, logDir }: ParsedOpArgs<'qa.runChecks'>,
  place: Place,
): Promise<OpValues['qa.runChecks']> {
  const kept = logDir !== undefined;
  const dir = kept ? insideRoot(place, logDir, 'qa.runChecks: logDir') : scratchLogs(place);
  try {
    const runs = await runChecks(cwd, checks, (check) => join(dir, `${check.id}.log`));
    const logs = Object.fromEntries(checks.map((c) => [c.id, readLog(join(dir, `${c.id}.log`))]));
    return { runs: kept ? runs : runs.map((run) => ({ ...run, log_path: null })), logs };
  } finally {
    if (!kept) rmSync(dir, { recursive: true, force: true });
  }
}

export async function prepareOp(
  { dir, copy, setup }: ParsedOpArgs<'qa.prepare'>,
  place: Place,
): Promise<OpValues['qa.prepare']> {
  insideRoot(place, dir, 'qa.prepare: dir');
  for (const file of copy) {
    const to = join(dir, file.path);
    mkdirSync(dirname(to), { recursive: true });
    writeFileSync(to, Buffer.from(file.base64, 'base64'));
    if (file.mode !== undefined) chmodSync(to, file.mode & 0o777);
  }
  const logDir = scratchLogs(place);
  try {
    // (the files to copy came with the request: the coordinator's repository is not here)
    const why = await prepareCheckout(dir, dir, { copy_files: [], setup }, (name) =>
      join(logDir, `${name}.log`),
    );
    const logs = Object.fromEntries(
      setup.map((_, i) => [`setup-${i + 1}`, readLog(join(logDir, `setup-${i + 1}.log`))]),
    );
    return { why, logs };
  } finally {
    rmSync(logDir, { recursive: true, force: true });
  }
}
