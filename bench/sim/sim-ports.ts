import { kernelRecordSchema } from '../../src/core/records/kernel.js';
import type { CheckRun, KernelRecord } from '../../src/core/records/kernel.js';
import type { Plan } from '../../src/core/plan/plan.js';
import {
  type CommitSummary,
  type GitPort,
  type LaneLook,
  NO_FACTS,
  type OfferFacts,
} from '../../src/core/ports/git-port.js';
import type { KernelRead, StorePort } from '../../src/core/ports/store-port.js';
import type { QaPort } from '../../src/core/ports/qa-port.js';
import { batchRecordSchema, checkRecordInvariants } from '../../src/core/records/record.js';
import type { BatchRecord } from '../../src/core/records/record.js';
import type { Report } from '../../src/core/records/report.js';

// The tick's ports held in memory for the simulation (a copy, for the bench, of what the
// unit tests use: test/helpers/memory-ports.ts; bench/ does not import test/). A lane is a
// path with a branch and a head; a commit is a sha with its parent. The store keeps the
// record and the kernels as the real one does, minus the file system (SimStore). What it
// leaves out (git's processes, the files' writes) is measured apart (git-cost.ts).

export const sha = (n: number) => n.toString(16).padStart(40, '0');

export interface SimLane {
  branch: string;
  head: string;
}

export class SimGit implements GitPort {
  readonly coordinatorRoot = '/repo';
  readonly tips = new Map<string, string>();
  readonly lanes = new Map<string, SimLane>();
  private readonly parents = new Map<string, string | null>();
  private next = 2;

  constructor(base: string) {
    this.parents.set(base, null);
  }

  private newSha(parent: string): string {
    const made = sha(this.next++);
    this.parents.set(made, parent);
    return made;
  }

  async branchTip(branch: string): Promise<string | null> {
    return this.tips.get(branch) ?? null;
  }
  async isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    for (let c: string | null = descendant; c; c = this.parents.get(c) ?? null)
      if (c === ancestor) return true;
    return false;
  }
  async commitsBetween(from: string, to: string): Promise<CommitSummary[]> {
    const out: CommitSummary[] = [];
    for (let c: string | null = to; c && c !== from; c = this.parents.get(c) ?? null) {
      const parent = this.parents.get(c) ?? null;
      out.unshift({ sha: c, parents: parent ? [parent] : [], trailers: {} });
    }
    return out;
  }
  async worktreesOnBranch(): Promise<string[]> {
    return [];
  }
  async offerFacts(path: string): Promise<OfferFacts> {
    const lane = this.lanes.get(path);
    if (!lane) return { ...NO_FACTS };
    return {
      realpath: path,
      sameRepository: true,
      isWorktreeRoot: true,
      branch: lane.branch,
      head: lane.head,
      clean: true,
    };
  }
  async lookAtLane(path: string): Promise<LaneLook> {
    const lane = this.lanes.get(path);
    return lane
      ? { present: true, branch: lane.branch, clean: true }
      : { present: false, branch: null, clean: false };
  }
  async changedPaths(lanePath: string): Promise<string[]> {
    return [`${lanePath.split('/').at(-1)}/work.txt`]; // (inside the child's scope: `<id>/**`)
  }
  async findDelivery(): Promise<string | null> {
    return null;
  }
  async commitDelivery(lanePath: string): Promise<string> {
    const lane = this.lanes.get(lanePath)!;
    lane.head = this.newSha(lane.head);
    return lane.head;
  }
  async syncLaneIndex(): Promise<void> {}
  async mergeTree(_head: string, laneCommit: string): Promise<{ tree: string; laneChangeOnly: boolean }> {
    return { tree: `tree-of-${laneCommit}`, laneChangeOnly: true }; // (scopes are disjoint: never a conflict)
  }
  async sameChange(): Promise<boolean> {
    return true;
  }
  async integrationCommit(_tree: string, parent: string): Promise<string> {
    return this.newSha(parent);
  }
  async advanceBranch(branch: string, next: string, expected: string): Promise<boolean> {
    if (this.tips.get(branch) !== expected) return false;
    this.tips.set(branch, next);
    return true;
  }
  async withScratchCheckout<T>(_commit: string, _dir: string, fn: (path: string) => Promise<T>): Promise<T> {
    return fn('/scratch');
  }
  async reworkLane(): Promise<never> {
    throw new Error('SimGit: no rework onto the head in the simulation');
  }
  async conflictMarkers(): Promise<string[]> {
    return [];
  }
}

export class SimStore implements StorePort {
  /** Each record as the real store keeps what it read or wrote last: validated, as JSON. */
  private recordJson: string;
  private readonly kernelJson = new Map<string, string>();

  constructor(
    record: BatchRecord,
    public plan: Plan,
  ) {
    this.recordJson = JSON.stringify(record);
  }

  get record(): BatchRecord {
    return JSON.parse(this.recordJson) as BatchRecord;
  }
  kernel(taskId: string): KernelRecord | undefined {
    const json = this.kernelJson.get(taskId);
    return json === undefined ? undefined : (JSON.parse(json) as KernelRecord);
  }

  // The CPU work of the real store (src/store/batch-store.ts, task-store.ts) without its
  // file system calls: a read parses the JSON it holds, a write validates (schema and
  // invariants) and serialises.
  readRecord(): BatchRecord {
    return JSON.parse(this.recordJson) as BatchRecord;
  }
  writeRecord(record: BatchRecord): void {
    const parsed = batchRecordSchema.safeParse(record, { reportInput: true });
    if (!parsed.success || checkRecordInvariants(parsed.data).length > 0)
      throw new Error(
        `SimStore: the tick wrote an unsound record: ${checkRecordInvariants(record).join('; ')}`,
      );
    JSON.stringify(parsed.data, null, 2); // (the file's text)
    this.recordJson = JSON.stringify(parsed.data);
  }
  readPlan(): Plan {
    return structuredClone(this.plan);
  }
  writePlan(plan: Plan): void {
    this.plan = plan;
  }
  writeReport(report: Report): void {
    JSON.stringify(report); // (the real store writes a running batch's report at most every 100 ms)
  }
  journal(event: string, fields: Record<string, unknown> = {}): void {
    JSON.stringify({ event, ...fields }); // (a journal line)
  }
  readKernel(taskId: string): KernelRead {
    const json = this.kernelJson.get(taskId);
    return json === undefined
      ? { kind: 'missing' }
      : { kind: 'ok', record: JSON.parse(json) as KernelRecord };
  }
  writeKernel(record: KernelRecord): void {
    const parsed = kernelRecordSchema.parse(record);
    JSON.stringify(parsed, null, 2); // (the file's text)
    this.kernelJson.set(record.task_id, JSON.stringify(parsed));
  }
  qaLogPath(): string {
    return '/logs/qa';
  }
  scratchDir(): string {
    return '/scratch';
  }
  integrationLogPath(): string {
    return '/logs/integration';
  }
  logDir(taskId: string): string {
    return `/logs/${taskId}`;
  }
}

/** QA whose verdict the simulation drew for the attempt that just ended (`failing`: by child). */
export function simQa(failing: ReadonlySet<string>): QaPort {
  return {
    async runChecks(cwd, checks): Promise<CheckRun[]> {
      const task = cwd.split('/').at(-1)!; // (a lane is /lanes/<machine>/<task>)
      const fails = failing.has(task);
      return checks.map((c) => ({
        id: c.id,
        exit_code: fails ? 1 : 0,
        timed_out: false,
        duration_ms: 1,
        log_path: null,
        tail: fails ? `${task}: ${c.id} failed` : '',
      }));
    },
  };
}
