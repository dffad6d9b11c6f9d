import type { CheckRun, KernelRecord } from '../../src/core/records/kernel.js';
import type { Plan } from '../../src/core/plan/plan.js';
import { parsePlanText } from '../../src/core/plan/plan.js';
import {
  type CommitSummary,
  type GitPort,
  type LaneLook,
  NO_FACTS,
  type OfferFacts,
} from '../../src/core/ports/git-port.js';
import type { KernelRead, StorePort } from '../../src/core/ports/store-port.js';
import type { TickPorts } from '../../src/core/ports/tick-ports.js';
import type { BatchRecord } from '../../src/core/records/record.js';
import type { HeadMoved, Report } from '../../src/core/records/report.js';
import { SHA } from './records.js';

// TickPorts held in memory (pure data, no processes, no files): what the tick's effects
// are decided from, without git. A lane is a path with a branch, a head, and whether it is
// clean; a commit is a sha with its parent and trailers. Tests that need git itself drive
// a real repository (test/helpers/batch.ts).

export interface MemoryLane {
  branch: string;
  head: string;
  clean: boolean;
  /** What the executor changed in it (QA's changed paths). */
  changed: string[];
}

export class MemoryGit implements GitPort {
  readonly coordinatorRoot = '/repo';
  readonly tips = new Map<string, string>();
  readonly lanes = new Map<string, MemoryLane>();
  private readonly commits = new Map<string, { parent: string | null; trailers: Record<string, string> }>();
  private next = 100;

  constructor(base: string) {
    this.commits.set(base, { parent: null, trailers: {} });
  }

  private newSha(parent: string, trailers: Record<string, string> = {}): string {
    const sha = SHA(this.next++);
    this.commits.set(sha, { parent, trailers });
    return sha;
  }

  async branchTip(branch: string): Promise<string | null> {
    return this.tips.get(branch) ?? null;
  }
  async isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    for (let c: string | null = descendant; c; c = this.commits.get(c)?.parent ?? null)
      if (c === ancestor) return true;
    return false;
  }
  async commitsBetween(from: string, to: string): Promise<CommitSummary[]> {
    const out: CommitSummary[] = [];
    for (let c: string | null = to; c && c !== from; c = this.commits.get(c)?.parent ?? null) {
      const commit = this.commits.get(c)!;
      out.unshift({ sha: c, parents: commit.parent ? [commit.parent] : [], trailers: commit.trailers });
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
      clean: lane.clean,
    };
  }
  async lookAtLane(path: string): Promise<LaneLook> {
    const lane = this.lanes.get(path);
    return lane
      ? { present: true, branch: lane.branch, clean: lane.clean }
      : { present: false, branch: null, clean: false };
  }
  async changedPaths(lanePath: string): Promise<string[]> {
    return this.lanes.get(lanePath)?.changed ?? [];
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
    return { tree: `tree-of-${laneCommit}`, laneChangeOnly: true };
  }
  async sameChange(): Promise<boolean> {
    return true;
  }
  async integrationCommit(_tree: string, parent: string, laneCommit: string): Promise<string> {
    return this.newSha(parent, { 'Lanes-Lane-Commit': laneCommit });
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
    throw new Error('MemoryGit: no rework onto the head in memory');
  }
  async conflictMarkers(): Promise<string[]> {
    return [];
  }
}

export class MemoryStore implements StorePort {
  readonly kernels = new Map<string, KernelRecord>();
  readonly reports: Report[] = [];
  readonly events: { event: string; fields: Record<string, unknown> }[] = [];
  /** How many times each child's kernel was written. */
  readonly kernelWrites = new Map<string, number>();

  constructor(
    public record: BatchRecord,
    public plan: Plan,
  ) {}

  readRecord(): BatchRecord {
    return structuredClone(this.record);
  }
  writeRecord(record: BatchRecord): void {
    this.record = structuredClone(record);
  }
  readPlan(): Plan {
    return this.plan;
  }
  writePlan(plan: Plan): void {
    this.plan = plan;
  }
  writeReport(report: Report): void {
    this.reports.push(report);
  }
  journal(event: string, fields: Record<string, unknown> = {}): void {
    this.events.push({ event, fields });
  }
  readKernel(taskId: string): KernelRead {
    const k = this.kernels.get(taskId);
    return k ? { kind: 'ok', record: structuredClone(k) } : { kind: 'missing' };
  }
  writeKernel(record: KernelRecord): void {
    this.kernels.set(record.task_id, structuredClone(record));
    this.kernelWrites.set(record.task_id, (this.kernelWrites.get(record.task_id) ?? 0) + 1);
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

/** A plan of children with no dependencies and one check each (`fails`: the checks that fail). */
export function memoryPlan(batch: string, ids: string[], maxParallel: number): Plan {
  const children = ids.map((id) => ({
    id,
    goal: `do ${id}`,
    scope: [`${id}/**`],
    acceptance: [{ id: 'ok', run: ['true'], timeout_ms: 1000 }],
  }));
  return parsePlanText(JSON.stringify({ batch, max_parallel: maxParallel, children }), 'plan.json');
}

export interface MemoryPorts extends TickPorts {
  store: MemoryStore;
  git: MemoryGit;
  /** The checks that fail, by child (`<task>:<check>`). */
  failing: Set<string>;
  /** What TickPorts.headMovedEarly was handed, in order. */
  movedEarly: HeadMoved[];
}

export function memoryPorts(record: BatchRecord, plan: Plan): MemoryPorts {
  const git = new MemoryGit(record.base_head);
  git.tips.set(record.branch, record.base_head);
  const store = new MemoryStore(record, plan);
  const failing = new Set<string>();
  let runs = 0;
  let ms = 0;
  const movedEarly: HeadMoved[] = [];
  const ports: MemoryPorts = {
    store,
    git,
    failing,
    movedEarly,
    qa: {
      async runChecks(cwd, checks): Promise<CheckRun[]> {
        const task = cwd.split('/').at(-1)!; // (a lane is /lanes/<task>)
        return checks.map((c) => ({
          id: c.id,
          exit_code: failing.has(`${task}:${c.id}`) ? 1 : 0,
          timed_out: false,
          duration_ms: 1,
          log_path: null,
          tail: failing.has(`${task}:${c.id}`) ? `${task}: ${c.id} failed` : '',
        }));
      },
    },
    clock: { now: () => new Date(Date.UTC(2026, 10, 29, 10, 0, 0, ms++)) },
    newRunId: () => `run-${++runs}`,
    integrationChecks: 'changed',
    crashPoint: () => {},
    headMovedEarly: (moved) => void movedEarly.push(moved),
  };
  return ports;
}

/** A lane for `task` at `head` in memory, the way the steward would make it (`/lanes/<task>`). */
export function memoryLane(
  ports: MemoryPorts,
  task: string,
  head: string,
  lane: Partial<MemoryLane> = {},
): string {
  const path = `/lanes/${task}`;
  const branch = `lane/${ports.store.record.batch_id}/${task}`;
  ports.git.lanes.set(path, { branch, head, clean: true, changed: [`${task}/x`], ...lane });
  return path;
}
