import { MachineHost } from '../../hosts/machine/machine-host.js';
import { MachinePool } from '../../machines/link/machine-pool.js';
import type { BatchRecord } from '../../core/records/record.js';
import { loadConfig } from '../../store/config-file.js';
import type { RepoPaths } from '../../store/state-dir.js';
import { poolOptions } from './batch-machines.js';

// The machines of a batch for a command that runs without its coordinator (`lanes clean`,
// and `lanes drop` / `lanes cancel` when nobody runs the batch): the pool of the config
// opened only when some lane of the record is on a machine, so that such a command can do
// there what it does for a local lane (stop its executor, remove what the batch left).

/** Null when no lane of the record is on a machine (or the config has none). */
export async function openRecordPool(
  repo: RepoPaths,
  record: BatchRecord,
  /** Told of each machine that did not pass its checks (it is left as it is). */
  leftOut: (name: string, reason: string) => void,
): Promise<MachinePool | null> {
  const config = loadConfig(repo.root);
  const remote = (m: string | undefined) => m !== undefined && m !== 'local';
  const onMachines = record.children.some(
    (c) => remote(c.machine) || (c.left_lanes ?? []).some((l) => remote(l.machine)),
  );
  if (!config.machines || !onMachines) return null;
  const pool = await MachinePool.open(poolOptions(repo, config, config.machines), []);
  for (const v of pool.currentViews()) if (v.state === 'left out') leftOut(v.name, v.reason ?? '');
  return pool;
}

/**
 * Ends what still runs of the lanes of `tasks` on their machines (their tmux sessions and
 * every process of their panes' groups), as the recorded pid of a local lane's executor is
 * ended; their worktrees stay (their work is brought home when the batch ends there).
 */
export async function stopOnMachines(
  pool: MachinePool,
  batchId: string,
  record: BatchRecord,
  tasks: readonly string[],
): Promise<void> {
  for (const child of record.children) {
    const remote = child.machine ? pool.remotes.get(child.machine) : undefined;
    if (!remote || !tasks.includes(child.task_id)) continue;
    const host = new MachineHost(remote.link, { batchId, tuiDrawn: false });
    try {
      await host.closeLane(child.task_id);
    } finally {
      await host.dispose();
    }
  }
}
