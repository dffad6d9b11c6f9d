import { join } from 'node:path';
import { LanesError } from '../core/basics/errors.js';
import type { KernelRecord } from '../core/records/kernel.js';
import { parsePlanText, planDigest } from '../core/plan/plan.js';
import type { Plan } from '../core/plan/plan.js';
import type { CoordinatorStorePort, KernelRead, WayOutRequest } from '../core/ports/store-port.js';
import type { BatchRecord } from '../core/records/record.js';
import type { Report } from '../core/records/report.js';
import { BatchStore } from './batch-store.js';
import { deepFreeze } from '../core/basics/frozen.js';
import { Journal } from './journal.js';
import type { JournalEvent } from './journal.js';
import { pendingRequests, removeRequest } from './requests.js';
import { readStateFileStamped, writeStateFileAtomic } from './safe-fs.js';
import type { FileStamp } from './safe-fs.js';
import { batchPaths } from './state-dir.js';
import { TaskStore } from './task-store.js';

// The store ports (the tick's and the coordinator's) over the state directory of one batch.

/** How often a running batch's report file is rewritten at most (writeReport). */
export const REPORT_EVERY_MS = 100;

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

  /** The last plan text parsed, its plan (frozen: core/basics/frozen.ts) and digest: every tick reads the plan, which rarely changes. */
  private parsedPlan: { text: string; plan: Plan; digest: string; stamp: FileStamp } | null = null;

  /** The plan as confirmed; its digest must match the record's. */
  readPlan(): Plan {
    const read = readStateFileStamped(this.stateDir, this.planPath, this.parsedPlan?.stamp ?? null);
    if (read === null)
      throw new LanesError('state_invalid', `the confirmed plan ${this.planPath} is missing`, 2);
    if (read !== 'same' && this.parsedPlan?.text !== read.text) {
      const parsed = parsePlanText(read.text, this.planPath, null); // (the confirmed plan is always JSON)
      this.parsedPlan = {
        text: read.text,
        plan: deepFreeze(parsed),
        digest: planDigest(parsed),
        stamp: read.stamp,
      };
    } else if (read !== 'same') this.parsedPlan!.stamp = read.stamp;
    const { digest } = this.parsedPlan!;
    const plan = this.parsedPlan!.plan;
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

  /**
   * A running batch's report is written at most every REPORT_EVERY_MS: every tick makes one,
   * and a reader from another process (`lanes wait`, `lanes status`) polls it. The latest
   * one waiting is written when that time is up (or by flushReport); any other report (the
   * batch stopped, ended or needs a human) is written at once, and replaces what waits.
   */
  writeReport(report: Report): void {
    this.pendingReport = null;
    const running = report.batch_state === 'running';
    const wait = this.lastReportAt + REPORT_EVERY_MS - Date.now();
    if (!running || wait <= 0) return this.writeReportNow(report);
    this.pendingReport = report;
    this.reportTimer ??= setTimeout(() => this.flushReport(), wait).unref();
  }

  /** Writes the report still waiting, if any (the coordinator does when it ends). */
  flushReport(): void {
    const report = this.pendingReport;
    this.pendingReport = null;
    if (report) this.writeReportNow(report);
  }

  private pendingReport: Report | null = null;
  private reportTimer: NodeJS.Timeout | null = null;
  private lastReportAt = 0;

  private writeReportNow(report: Report): void {
    if (this.reportTimer) clearTimeout(this.reportTimer);
    this.reportTimer = null;
    this.store.writeReport(report);
    this.lastReportAt = Date.now();
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
