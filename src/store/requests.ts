import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ID_PATTERN } from '../core/basics/ids.js';
import { ensureStateDir, readStateFile, writeStateFileAtomic } from './safe-fs.js';
import { batchPaths } from './state-dir.js';

// Requests to a running coordinator (docs/DECISIONS.md, "No dead ends"): `lanes drop` and
// `lanes cancel` find the batch locked by a live coordinator and leave their request as a
// file in batches/<batch>/requests/; the coordinator polls that folder, carries the request
// out in its next tick and removes the file once the tick has persisted it. A request read
// again after a crash is harmless: drop and cancel are idempotent.

export const requestSchema = z.discriminatedUnion('action', [
  z.strictObject({
    action: z.literal('drop'),
    task_id: z.string().regex(ID_PATTERN),
    reason: z.string().min(1),
  }),
  z.strictObject({ action: z.literal('cancel'), reason: z.string().min(1) }),
]);
export type CoordinatorRequest = z.output<typeof requestSchema>;

export interface PendingRequest {
  file: string;
  request: CoordinatorRequest;
}

export function requestsDir(stateDir: string, batchId: string): string {
  return join(batchPaths(stateDir, batchId).batchDir, 'requests');
}

export function writeRequest(stateDir: string, batchId: string, request: CoordinatorRequest): string {
  const dir = requestsDir(stateDir, batchId);
  ensureStateDir(stateDir, dir);
  const file = join(dir, `${Date.now()}-${process.pid}-${request.action}.json`);
  writeStateFileAtomic(stateDir, file, `${JSON.stringify(requestSchema.parse(request))}\n`);
  return file;
}

/** The requests waiting, oldest first. An unreadable one is removed (and reported by its name). */
export function pendingRequests(
  stateDir: string,
  batchId: string,
  onBad?: (file: string) => void,
): PendingRequest[] {
  const dir = requestsDir(stateDir, batchId);
  if (!existsSync(dir)) return [];
  const out: PendingRequest[] = [];
  for (const name of readdirSync(dir)
    .filter((n) => n.endsWith('.json'))
    .sort()) {
    const file = join(dir, name);
    try {
      out.push({ file, request: requestSchema.parse(JSON.parse(readStateFile(stateDir, file) ?? '')) });
    } catch {
      rmSync(file, { force: true });
      onBad?.(file);
    }
  }
  return out;
}

export function removeRequest(file: string): void {
  rmSync(file, { force: true });
}
