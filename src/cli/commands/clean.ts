import { readdirSync, rmdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Steward } from '../../coordinator/lanes/steward.js';
import { cleanBatch } from '../../coordinator/whole-batch/clean-batch.js';
import { LaneWorktrees } from '../../git/ports/lane-worktrees.js';
import { BatchStore } from '../../store/batch-store.js';
import { loadConfig } from '../../store/config-file.js';
import { findRepo } from '../../store/state-dir.js';
import type { RepoPaths } from '../../store/state-dir.js';
import { batchIdArg, parseCommand } from '../args.js';
import type { CommandContext } from '../context.js';
import { theBatch } from './the-batch.js';
import type { BatchRecord } from '../../core/records/record.js';
import { openRecordPool } from '../batch-run/offline-machines.js';

/** `lanes clean [<batch>] [--force]` */
export async function cleanCommand(ctx: CommandContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand('clean', argv, { force: { type: 'boolean' } }, 1);
  const repo = await findRepo(ctx.cwd);
  const store = new BatchStore(repo.stateDir);
  const batchId = batchIdArg('clean', positionals[0]) ?? theBatch(store, 'clean');
  const folders = batchFolders(repo, store, batchId);
  const record = store.read(batchId); // (before the clean removes it: which lanes were on machines)
  ctx.stdout(`${await cleanBatch(repo, batchId, values.force ?? false)}\n`);
  if (record) await cleanMachines(ctx, repo, record, batchId);
  // (the folders the batch's lanes and trash were in go too, once nothing is left in them)
  for (const dir of folders) removeIfEmpty(dir);
  return 0;
}

/** The batch's lanes folders (`<repo>.lanes/<batch>` by default) and its trash folder. */
function batchFolders(repo: RepoPaths, store: BatchStore, batchId: string): string[] {
  const record = store.read(batchId);
  if (record === null) return [];
  const steward = new Steward(
    repo.root,
    batchId,
    loadConfig(repo.root),
    () => '',
    new LaneWorktrees(repo.root),
  );
  const lanes = new Set(record.children.map((c) => dirname(steward.lanePath(c.task_id))));
  return [...lanes, join(repo.stateDir, 'trash', batchId)];
}

function removeIfEmpty(dir: string): void {
  try {
    if (readdirSync(dir).length === 0) rmdirSync(dir);
  } catch {
    // gone already, or not ours to read: left as it is
  }
}

/**
 * What the batch left on its machines (worktrees, branches, sessions, runs) removed too, the
 * work of lanes not integrated kept on their branches here first; a machine that does not
 * answer is named and left as it is.
 */
async function cleanMachines(ctx: CommandContext, repo: RepoPaths, record: BatchRecord, batchId: string) {
  const pool = await openRecordPool(repo, record, (name, why) =>
    ctx.stderr(`lanes clean: machine ${name} not cleaned: ${why}\n`),
  );
  if (!pool) return;
  try {
    await pool.cleanBatch(batchId, record.children);
  } finally {
    await pool.close();
  }
}
