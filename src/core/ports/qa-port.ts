import type { CheckRun } from '../records/kernel.js';
import type { AcceptanceCheck } from '../plan/plan.js';

// Acceptance checks (adapter: src/qa/check-runner.ts).

export interface QaPort {
  runChecks(
    cwd: string,
    checks: readonly AcceptanceCheck[],
    logPathFor: (check: AcceptanceCheck) => string | null,
  ): Promise<CheckRun[]>;
  /** Readies a scratch checkout like a lane (copy_files, setup): null, or why it failed. */
  prepare?(dir: string, logPathFor: (name: string) => string): Promise<string | null>;
}
