import { Coordinator } from '../coordinator/coordinator.js';
import type { CoordinatorEvent, CoordinatorResult } from '../coordinator/coordinator.js';
import { loadConfig } from '../core/config.js';
import { badInput, ExitCode, LanesError } from '../core/errors.js';
import type { Approval } from '../core/resume.js';
import { HeadlessHost } from '../hosts/headless-host.js';
import type { Host } from '../hosts/host.js';
import { PtyHost } from '../hosts/pty-host.js';
import { acquireBatchLock } from '../store/lock.js';
import type { BatchLock } from '../store/lock.js';
import type { RepoPaths } from '../store/state-dir.js';
import { batchPorts } from './batch-ports.js';
import type { CommandContext } from './context.js';
import { formatReport } from './print-report.js';
import { progressPrinter } from './progress.js';

// Runs a batch's coordinator loop in this process until the batch stops, then maps the
// state it ends on to the exit code (SPEC §9).

export type HostName = 'pty' | 'herdr' | 'headless';

export function parseHost(value: string | undefined): HostName | undefined {
  if (value === undefined) return undefined;
  if (value === 'pty' || value === 'herdr' || value === 'headless') return value;
  throw badInput('usage', `--host must be pty, herdr or headless, got "${value.slice(0, 40)}"`);
}

/** SPEC §7: --host when given; else herdr inside Herdr; else pty when a TUI is drawn; else headless. */
export function chooseHost(explicit: HostName | undefined, tuiDrawn: boolean): HostName {
  if (explicit) return explicit;
  return tuiDrawn ? 'pty' : 'headless';
}

export async function makeHost(name: HostName): Promise<Host> {
  if (name === 'pty')
    return new PtyHost({
      cols: process.stdout.columns || 120,
      rows: Math.max(10, (process.stdout.rows || 40) - 12),
    });
  if (name === 'herdr')
    throw new LanesError(
      'not_implemented',
      'the herdr host is not in this version yet; use --host pty or --host headless',
      2,
    );
  return new HeadlessHost();
}

export function exitCodeFor(result: CoordinatorResult): number {
  if (result.state === 'completed') return ExitCode.ok;
  if (result.state === 'failed' || result.state === 'rejected') return ExitCode.failed;
  return ExitCode.needsHuman;
}

export interface RunOptions {
  repo: RepoPaths;
  batchId: string;
  host: HostName;
  approval?: Approval;
  command: string;
  /** A lock already held for this batch (start holds it from confirmation on). */
  lock?: BatchLock;
  onEvent?: (event: CoordinatorEvent) => void;
}

export async function runBatch(ctx: CommandContext, options: RunOptions): Promise<number> {
  const lock =
    options.lock ?? (await acquireBatchLock(options.repo.stateDir, options.batchId, options.command));
  const host = await makeHost(options.host);
  const config = loadConfig(options.repo.root);
  const coordinator = new Coordinator({
    batchId: options.batchId,
    repoRoot: options.repo.root,
    ports: batchPorts(options.repo, options.batchId),
    config,
    host,
    ...(options.approval ? { approval: options.approval } : {}),
    onEvent: options.onEvent ?? progressPrinter((line) => ctx.stderr(`${line}\n`)),
  });
  const stop = () => coordinator.stop();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    const result = await coordinator.run();
    ctx.stdout(formatReport(result.report));
    if (result.paused)
      ctx.stderr(
        `lanes: dispatch paused (${coordinator.pauseReason}); lanes resume ${options.batchId} goes on\n`,
      );
    if (result.waitingForReview.length)
      ctx.stderr(
        `lanes: waiting for a review of ${result.waitingForReview.join(', ')}: lanes tick ${options.batchId} --review <child>=approve|reject\n`,
      );
    return exitCodeFor(result);
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    if (options.host !== 'herdr') await host.dispose();
    await lock.release();
  }
}
