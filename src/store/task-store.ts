import { join } from 'node:path';
import { LanesError } from '../core/errors.js';
import { formatIssues } from '../core/issues.js';
import { kernelRecordSchema } from '../core/kernel.js';
import type { KernelRecord } from '../core/kernel.js';
import type { KernelRead } from '../core/ports.js';
import { batchPaths } from './state-dir.js';
import { readStateFile, writeStateFileAtomic } from './safe-fs.js';

// Lane kernel records: <state>/batches/<batch>/tasks/<child>.json.

export type { KernelRead } from '../core/ports.js';

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

  read(taskId: string): KernelRead {
    let text: string | null;
    try {
      text = readStateFile(this.stateDir, this.path(taskId));
    } catch (error) {
      return { kind: 'unreadable', why: (error as Error).message };
    }
    if (text === null) return { kind: 'missing' };
    try {
      const parsed = kernelRecordSchema.safeParse(JSON.parse(text));
      if (!parsed.success) return { kind: 'unreadable', why: formatIssues(parsed.error).join('; ') };
      return { kind: 'ok', record: parsed.data };
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
    writeStateFileAtomic(
      this.stateDir,
      this.path(record.task_id),
      `${JSON.stringify(parsed.data, null, 2)}\n`,
    );
  }
}
