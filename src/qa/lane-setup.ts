import { copyFileSync, existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Config } from '../core/settings/config.js';
import type { CheckRun } from '../core/records/kernel.js';
import type { AcceptanceCheck } from '../core/plan/plan.js';
import { runCheck } from './check-runner.js';

// What a fresh checkout gets before anything runs in it: the configured files copied from
// the repository (`copy_files`, e.g. `.env`) and the setup commands (`setup`, e.g. `npm ci`),
// each with its output in a log. Used for lanes (the steward) and for the scratch checkout
// that re-verifies a merged tree, so checks see the same environment in both.

export const SETUP_TIMEOUT_MS = 30 * 60_000;

/** Null when the checkout is ready, else why not (with the failing command's output tail). */
export async function prepareCheckout(
  repoRoot: string,
  dir: string,
  config: Pick<Config, 'copy_files' | 'setup'>,
  logPathFor: (name: string) => string,
): Promise<string | null> {
  const failed = await prepareCheckoutRun(repoRoot, dir, config, logPathFor);
  if (failed === null) return null;
  const how = failed.run.timed_out ? 'timed out' : `exited ${failed.run.exit_code}`;
  return `setup command ${failed.n} ${how}:\n${failed.run.tail}`;
}

/** prepareCheckout, with the failing setup command's own run (its number, from 1), or null. */
export async function prepareCheckoutRun(
  repoRoot: string,
  dir: string,
  config: Pick<Config, 'copy_files' | 'setup'>,
  logPathFor: (name: string) => string,
): Promise<{ n: number; run: CheckRun } | null> {
  for (const file of config.copy_files) {
    const from = join(repoRoot, file);
    if (existsSync(from) && statSync(from).isFile()) {
      mkdirSync(dirname(join(dir, file)), { recursive: true });
      copyFileSync(from, join(dir, file));
    }
  }
  for (const [i, command] of config.setup.entries()) {
    const check: AcceptanceCheck = { id: `setup-${i + 1}`, run: command, timeout_ms: SETUP_TIMEOUT_MS };
    const log = logPathFor(`setup-${i + 1}`);
    mkdirSync(dirname(log), { recursive: true });
    const result = await runCheck(dir, check, log);
    if (result.exit_code !== 0) return { n: i + 1, run: result };
  }
  return null;
}
