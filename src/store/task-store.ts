import { join } from 'node:path';
import { LanesError } from '../core/basics/errors.js';
import { formatIssues } from '../core/basics/issues.js';
import { kernelRecordSchema } from '../core/records/kernel.js';
import type { KernelRecord } from '../core/records/kernel.js';
import type { KernelRead } from '../core/ports/store-port.js';
import { deepFreeze } from '../core/basics/frozen.js';
import { batchPaths } from './state-dir.js';
import { readStateFileStamped, writeStateFileAtomic } from './safe-fs.js';
import type { FileStamp } from './safe-fs.js';

// Lane kernel records: <state>/batches/<batch>/tasks/<child>.json.

export type { KernelRead } from '../core/ports/store-port.js';

export class TaskStore {
  constructor(
    private readonly stateDir: string,
    private readonly batchId: string,
  ) {}

  path(taskId: string): string {
    return join(batchPaths(this.stateDir, this.batchId).tasksDir, `${taskId}.json`);
  }

  logDir(taskId: string): string {
    return join(batchPaths(this.stateDir, this.batchId).logsDir, taskId);
  }

  /**
   * Each kernel record this store read or wrote, validated, by the file's stamp: every tick
   * reads the records of every lane it had, which change only when written. Handed to every
   * reader as one frozen object (core/basics/frozen.ts).
   */
  private readonly known = new Map<string, { stamp: FileStamp; record: KernelRecord }>();

  read(taskId: string): KernelRead {
    const known = this.known.get(taskId) ?? null;
    let read: ReturnType<typeof readStateFileStamped>;
    try {
      read = readStateFileStamped(this.stateDir, this.path(taskId), known?.stamp ?? null);
    } catch (error) {
      return { kind: 'unreadable', why: (error as Error).message };
    }
    if (read === 'same') return { kind: 'ok', record: known!.record };
    this.known.delete(taskId);
    if (read === null) return { kind: 'missing' };
    try {
      const parsed = kernelRecordSchema.safeParse(JSON.parse(read.text));
      if (!parsed.success) return { kind: 'unreadable', why: formatIssues(parsed.error).join('; ') };
      const record = deepFreeze(parsed.data);
      this.known.set(taskId, { stamp: read.stamp, record });
      return { kind: 'ok', record };
    } catch (error) {
      return { kind: 'unreadable', why: `not valid JSON: ${(error as Error).message}` };
    }
  }

  write(record: KernelRecord): void {
    const parsed = kernelRecordSchema.safeParse(record);
    if (!parsed.success)
      throw new LanesError(
        'state_invalid',
        `kernel record for ${record.task_id} is invalid: ${formatIssues(parsed.error).join('; ')}`,
        1,
      );
    const stamp = writeStateFileAtomic(
      this.stateDir,
      this.path(record.task_id),
      `${JSON.stringify(parsed.data, null, 2)}\n`,
    );
    this.known.set(record.task_id, { stamp, record: deepFreeze(parsed.data) });
  }
}
