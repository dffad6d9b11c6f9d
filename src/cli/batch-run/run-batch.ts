import { Coordinator } from '../../coordinator/loop/coordinator.js';
import type { CoordinatorEvent, CoordinatorResult } from '../../coordinator/loop/coordinator.js';
import { loadConfig } from '../../store/config-file.js';
import { ExitCode } from '../../core/basics/errors.js';
import { TERMINAL_BATCH_STATES } from '../../core/records/record.js';
import { exitCodeForState } from '../exit-codes.js';
import type { Approval } from '../../core/ways-out/resume.js';
import type { Host } from '../../hosts/host.js';
import type { HostRegistry } from '../../hosts/host-registry.js';
import { acquireBatchLock } from '../../store/lock.js';
import type { BatchLock } from '../../store/lock.js';
import type { RepoPaths } from '../../store/state-dir.js';
import { batchPorts } from './batch-ports.js';
import { LaneWorktrees } from '../../git/ports/lane-worktrees.js';
import { RepoSessions } from '../../git/runner/repo-sessions.js';
import type { CommandContext } from '../context.js';
import { printEnding } from './ending.js';
import type { BatchMachines } from './batch-machines.js';
import type { MachinePool } from '../../machines/link/machine-pool.js';
import { progressPrinter } from './progress.js';
import { makeHost, type HostName } from './host-choice.js';

// Runs a batch's coordinator loop in this process until the batch stops, then maps the
// state it ends on to the exit code (DESIGN §9).

export function exitCodeFor(result: CoordinatorResult): number {
  return exitCodeForState(result.state, result.paused);
}

export interface RunOptions {
  repo: RepoPaths;
  batchId: string;
  host: HostName;
  /** The hosts `host` is one of (a test adds its own); the built-in ones by default. */
  hosts?: HostRegistry;
  approval?: Approval;
  command: string;
  /** A lock already held for this batch (start holds it from confirmation on). */
  lock?: BatchLock;
  onEvent?: (event: CoordinatorEvent) => void;
  /** The machines, connected and checked at confirmation (null: none); absent: opened here. */
  machines?: MachinePool | null;
}

export async function runBatch(ctx: CommandContext, options: RunOptions): Promise<number> {
  const lock =
    options.lock ?? (await acquireBatchLock(options.repo.stateDir, options.batchId, options.command));
  const localPorts = batchPorts(options.repo, options.batchId);
  const onEvent = options.onEvent ?? progressPrinter((line) => ctx.stderr(`${line}\n`), localPorts.store);
  const config = loadConfig(options.repo.root);
  let host: Host;
  let machines: BatchMachines | null = null;
  try {
    // (the machines' modules, xterm's parser and node-pty among them, load only for a batch
    // that has machines: a local batch reaches its first tick without them)
    const wiring = options.machines || config.machines ? await import('./batch-machines.js') : null;
    const pool =
      options.machines !== undefined
        ? options.machines
        : ((await wiring?.openMachinePool(options.repo, config, localPorts.store.readPlan())) ?? null);
    if (pool && wiring)
      machines = wiring.wireMachines(pool, options.repo, options.batchId, config, localPorts.store);
    for (const v of machines?.views ?? [])
      if (v.state === 'left out')
        onEvent({ kind: 'notice', text: `machine ${v.name} left out: ${v.reason}` });
    host = await makeHost(options.host, (text) => onEvent({ kind: 'notice', text }), options.hosts);
  } catch (error) {
    await machines?.close();
    await lock.release(); // (Herdr or no machine usable: nothing ran, the batch is left as it was)
    throw error;
  }
  const ports = machines ? machines.ports(localPorts) : localPorts;
  const worktrees = new LaneWorktrees(options.repo.root);
  worktrees.warm();
  // The identity lanes' commits carry (two `git var`, asked once a process) is read while the
  // first lanes are made, not when the first delivery waits for it.
  RepoSessions.of(options.repo.root)
    .ident()
    .catch(() => {}); // (a failure is the delivery's to meet, from the same promise)
  if (machines) host = machines.host(host, false);
  const coordinator = new Coordinator({
    batchId: options.batchId,
    repoRoot: options.repo.root,
    commonDir: options.repo.commonDir,
    ports,
    worktrees: machines ? machines.worktrees(worktrees) : worktrees,
    config,
    host,
    ...(machines ? { machines: machines.coordinator } : {}),
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
    await machines?.close(); // (a batch that ended leaves nothing on its machines)
    await lock.release();
  }
}
