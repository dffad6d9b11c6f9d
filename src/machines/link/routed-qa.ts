import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { AcceptanceCheck } from '../../core/plan/plan.js';
import type { QaPort } from '../../core/ports/qa-port.js';
import type { CheckRun } from '../../core/records/kernel.js';
import type { Config } from '../../core/settings/config.js';
import type { MachineRouter } from './router.js';

// QA and a lane's setup where the lane is: on its machine (`qa.runChecks`, `qa.prepare`),
// their logs brought back and written where the coordinator keeps a local lane's logs.
// copy_files are read here, from the coordinator's repository (the machine never reads it),
// and sent with the request.

export class RoutedQa implements QaPort {
  constructor(
    private readonly local: QaPort,
    private readonly router: MachineRouter,
    private readonly repoRoot: string,
    private readonly config: Pick<Config, 'copy_files' | 'setup'>,
  ) {}

  async runChecks(
    cwd: string,
    checks: readonly AcceptanceCheck[],
    logPathFor: (check: AcceptanceCheck) => string | null,
  ): Promise<CheckRun[]> {
    const m = this.router.byPath(cwd);
    if (!m) return this.local.runChecks(cwd, checks, logPathFor);
    const { runs, logs } = await m.op<{ runs: CheckRun[]; logs: Record<string, string> }>('qa.runChecks', {
      cwd,
      checks,
    });
    for (const check of checks) {
      const path = logPathFor(check);
      const text = logs[check.id];
      if (path !== null && text !== undefined) writeLog(path, text);
    }
    return runs;
  }

  async prepare(dir: string, logPathFor: (name: string) => string): Promise<string | null> {
    const m = this.router.byPath(dir);
    if (!m) return this.local.prepare ? this.local.prepare(dir, logPathFor) : null;
    const copy = this.config.copy_files.flatMap((file) => {
      const from = join(this.repoRoot, file);
      if (!existsSync(from) || !statSync(from).isFile()) return [];
      return [
        { path: file, base64: readFileSync(from).toString('base64'), mode: statSync(from).mode & 0o777 },
      ];
    });
    const { why, logs } = await m.op<{ why: string | null; logs: Record<string, string> }>('qa.prepare', {
      dir,
      copy,
      setup: this.config.setup,
    });
    for (const [name, text] of Object.entries(logs)) writeLog(logPathFor(name), text);
    return why;
  }
}

function writeLog(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}
