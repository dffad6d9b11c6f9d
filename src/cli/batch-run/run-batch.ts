import { Coordinator } from '../../coordinator/loop/coordinator.js';
import type { CoordinatorEvent, CoordinatorResult } from '../../coordinator/loop/coordinator.js';
import { loadConfig } from '../../store/config-file.js';
import { badInput, ExitCode } from '../../core/basics/errors.js';
import { TERMINAL_BATCH_STATES } from '../../core/records/record.js';
import { exitCodeForState } from '../exit-codes.js';
import type { Approval } from '../../core/ways-out/resume.js';
import { HeadlessHost } from '../../hosts/headless-host.js';
import { herdrUnusableReason } from '../../hosts/herdr/herdr-detect.js';
import { HerdrHost } from '../../hosts/herdr/herdr-host.js';
import type { Host } from '../../hosts/host.js';
import { acquireBatchLock } from '../../store/lock.js';
import type { BatchLock } from '../../store/lock.js';
import type { RepoPaths } from '../../store/state-dir.js';
import { batchPorts } from './batch-ports.js';
import { LaneWorktrees } from '../../git/ports/lane-worktrees.js';
import type { CommandContext } from '../context.js';
import { printEnding } from './ending.js';
import { progressPrinter } from './progress.js';

// Runs a batch's coordinator loop in this process until the batch stops, then maps the
// state it ends on to the exit code (DESIGN §9).

export type HostName = 'pty' | 'herdr' | 'headless';

export function parseHost(value: string | undefined): HostName | undefined {
  if (value === undefined) return undefined;
  if (value === 'pty' || value === 'herdr' || value === 'headless') return value;
  throw badInput('usage', `--host must be pty, herdr or headless, got "${value.slice(0, 40)}"`);
}

/** DESIGN §7: --host when given; else herdr inside Herdr; else pty when a TUI is drawn; else headless. */
export function chooseHost(explicit: HostName | undefined, tuiDrawn: boolean): HostName {
  if (explicit) return explicit;
  const fallback = tuiDrawn ? 'pty' : 'headless';
  if (process.env.HERDR_ENV === '1') {
    const why = herdrUnusableReason();
    if (why === null) return 'herdr';
    process.stderr.write(
      `lanes: HERDR_ENV=1 but Herdr cannot be driven (${why}); using the ${fallback} host\n`,
    );
  }
  return fallback;
}

/** `notify` hears what a host has to say mid-batch (the Herdr host: "Herdr is not answering"). */
export async function makeHost(name: HostName, notify?: (text: string) => void): Promise<Host> {
  // (the pty host's modules, xterm's and node-pty's, load only for a batch that uses it)
  if (name === 'pty') {
    const { PtyHost } = await import('../../hosts/pty/pty-host.js');
    return new PtyHost({
      cols: process.stdout.columns || 120,
      rows: Math.max(10, (process.stdout.rows || 40) - 12),
    });
  }
  if (name === 'herdr') return HerdrHost.connect(notify);
  return new HeadlessHost();
}

export function exitCodeFor(result: CoordinatorResult): number {
  return exitCodeForState(result.state, result.paused);
}

/** The TUI is drawn on a terminal unless --headless says otherwise (DESIGN §9). */
export function drawsTui(headless: boolean | undefined): boolean {
  return !headless && process.stdin.isTTY === true && process.stdout.isTTY === true;
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
  const ports = batchPorts(options.repo, options.batchId);
  const onEvent = options.onEvent ?? progressPrinter((line) => ctx.stderr(`${line}\n`), ports.store);
  let host: Host;
  try {
    host = await makeHost(options.host, (text) => onEvent({ kind: 'notice', text }));
  } catch (error) {
    await lock.release(); // (Herdr not usable: nothing ran, the batch is left as it was)
    throw error;
  }
  const config = loadConfig(options.repo.root);
  const coordinator = new Coordinator({
    batchId: options.batchId,
    repoRoot: options.repo.root,
    ports,
    worktrees: new LaneWorktrees(options.repo.root),
    config,
    host,
    ...(options.approval ? { approval: options.approval } : {}),
    onEvent,
  });
  let interrupted = false;
  const stop = () => {
    interrupted = true;
    coordinator.interrupt();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    const result = await coordinator.run();
    printEnding(ctx, { result, batchId: options.batchId, pauseReason: coordinator.pauseReason, interrupted });
    return interrupted && !TERMINAL_BATCH_STATES.has(result.state)
      ? ExitCode.needsHuman
      : exitCodeFor(result);
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    await host.dispose(); // (the Herdr host only stops watching: its tabs keep running)
    await lock.release();
  }
}
