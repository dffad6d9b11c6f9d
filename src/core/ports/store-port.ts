import type { KernelRecord } from '../records/kernel.js';
import type { Plan } from '../plan/plan.js';
import type { BatchRecord } from '../records/record.js';
import type { Report } from '../records/report.js';

// The state directory as the core sees it (adapter: src/store/batch-files.ts).

export type KernelRead =
  { kind: 'missing' } | { kind: 'unreadable'; why: string } | { kind: 'ok'; record: KernelRecord };

export interface StorePort {
  readRecord(): BatchRecord;
  writeRecord(record: BatchRecord): void;
  readPlan(): Plan;
  writePlan(plan: Plan): void;
  writeReport(report: Report): void;
  journal(event: string, fields?: Record<string, unknown>): void;
  readKernel(taskId: string): KernelRead;
  writeKernel(record: KernelRecord): void;
  qaLogPath(taskId: string, qaRun: number, checkId: string): string;
  scratchDir(): string;
  /** Where a re-verification's output goes (kept in the child's logs, shown by `l`). */
  integrationLogPath(taskId: string, candidate: string, name: string): string;
  /** The folder of a child's logs: executor transcripts and prompts, QA and setup logs. */
  logDir(taskId: string): string;
}

/** A request left by `lanes drop` / `lanes cancel` for the coordinator that runs the batch. */
export type WayOutRequest =
  { action: 'drop'; task_id: string; reason: string } | { action: 'cancel'; reason: string };

/**
 * What the coordinator needs of the store beyond the tick's: the requests other terminals
 * leave, where dropped lanes go, and a name for the batch's hook socket.
 */
export interface CoordinatorStorePort extends StorePort {
  readonly batchId: string;
  /** Unique to this batch in this state directory: the hook channel's socket is named after it. */
  channelName(): string;
  /** The requests waiting, oldest first (an unreadable one is removed). */
  pendingRequests(): { file: string; request: WayOutRequest }[];
  /** Done with a request: its file goes (the command that left it waits for that). */
  removeRequest(file: string): void;
  /** The folder the worktrees of dropped children are moved into. */
  trashDir(): string;
  /** Writes a report that writeReport held back (a running batch's, rewritten at most so often). */
  flushReport(): void;
}
