import { join } from 'node:path';
import { LanesError } from '../core/errors.js';
import type { KernelRecord } from '../core/kernel.js';
import { parsePlanText, planDigest } from '../core/plan.js';
import type { Plan } from '../core/plan.js';
import type { CoordinatorStorePort, KernelRead, WayOutRequest } from '../core/ports.js';
import type { BatchRecord } from '../core/record.js';
import type { Report } from '../core/report.js';
import { BatchStore } from './batch-store.js';
import { Journal } from './journal.js';
import type { JournalEvent } from './journal.js';
import { pendingRequests, removeRequest } from './requests.js';
import { readStateFile, writeStateFileAtomic } from './safe-fs.js';
import { batchPaths } from './state-dir.js';
import { TaskStore } from './task-store.js';

// The store ports (the tick's and the coordinator's) over the state directory of one batch.

export class BatchFiles implements CoordinatorStorePort {
  readonly store: BatchStore;
  readonly tasks: TaskStore;
  readonly journalFile: Journal;

  constructor(
    readonly stateDir: string,
    readonly batchId: string,
    now: () => Date = () => new Date(),
  ) {
    this.store = new BatchStore(stateDir);
    this.tasks = new TaskStore(stateDir, batchId);
    this.journalFile = new Journal(stateDir, batchPaths(stateDir, batchId).journal, batchId, now);
  }

  get planPath(): string {
    return join(batchPaths(this.stateDir, this.batchId).batchDir, 'plan.json');
  }

  readRecord(): BatchRecord {
    const record = this.store.read(this.batchId);
    if (!record)
      throw new LanesError('state_missing', `no batch named "${this.batchId}" in this repository`, 2);
    return record;
  }

  writeRecord(record: BatchRecord): void {
    this.store.write(record);
  }

  /** The last plan text parsed, its plan and digest: every tick reads the plan, which rarely changes (each reader gets its own copy). */
  private parsedPlan: { text: string; plan: string; digest: string } | null = null;

  /** The plan as confirmed; its digest must match the record's. */
  readPlan(): Plan {
    const text = readStateFile(this.stateDir, this.planPath);
    if (text === null)
      throw new LanesError('state_invalid', `the confirmed plan ${this.planPath} is missing`, 2);
    if (this.parsedPlan?.text !== text) {
      const parsed = parsePlanText(text, this.planPath, null); // (the confirmed plan is always JSON)
      this.parsedPlan = { text, plan: JSON.stringify(parsed), digest: planDigest(parsed) };
    }
    const { digest } = this.parsedPlan;
    const plan = JSON.parse(this.parsedPlan.plan) as Plan;
    const recorded = this.store.planDigest(this.batchId);
    if (recorded !== null && digest !== recorded)
      throw new LanesError(
        'state_invalid',
        `the confirmed plan ${this.planPath} does not match the record's plan_digest (edited by hand?)`,
        2,
      );
    return plan;
  }

  writePlan(plan: Plan): void {
    writeStateFileAtomic(this.stateDir, this.planPath, `${JSON.stringify(plan, null, 2)}\n`);
  }

  writeReport(report: Report): void {
    this.store.writeReport(report);
  }

  journal(event: string, fields: Record<string, unknown> = {}): void {
    this.journalFile.append(event as JournalEvent, fields);
  }

  readKernel(taskId: string): KernelRead {
    return this.tasks.read(taskId);
  }

  writeKernel(record: KernelRecord): void {
    this.tasks.write(record);
  }

  qaLogPath(taskId: string, qaRun: number, checkId: string): string {
    return join(this.tasks.logDir(taskId), `qa-${qaRun}-${checkId}.log`);
  }

  integrationLogPath(taskId: string, candidate: string, name: string): string {
    return join(this.tasks.logDir(taskId), `integration-${candidate.slice(0, 12)}-${name}.log`);
  }

  scratchDir(): string {
    return join(this.stateDir, 'scratch', this.batchId);
  }

  logDir(taskId: string): string {
    return this.tasks.logDir(taskId);
  }

  channelName(): string {
    return `${this.stateDir}\0${this.batchId}`;
  }

  pendingRequests(): { file: string; request: WayOutRequest }[] {
    return pendingRequests(this.stateDir, this.batchId);
  }

  removeRequest(file: string): void {
    removeRequest(file);
  }

  trashDir(): string {
    return join(this.stateDir, 'trash', this.batchId);
  }
}
