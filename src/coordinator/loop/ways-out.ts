import { CANCEL_REASON } from '../../core/ways-out/cancel.js';
import { crashPoint } from '../../process/crash-points.js';
import type { CoordinatorStorePort } from '../../core/ports/store-port.js';
import type { WorktreePort } from '../../core/ports/worktree-port.js';
import type { ChildRecord } from '../../core/records/record.js';
import type { DropRequest } from '../../core/ways-out/ways-out.js';
import type { ExecutorRunner } from '../executors/executor-runner.js';
import { trashAndJournal } from '../lanes/trash.js';

// The coordinator's side of drop and cancel (docs/DECISIONS.md, "No dead ends"): intents
// from the TUI keys and requests left by `lanes drop` / `lanes cancel` in another terminal
// (polled from batches/<batch>/requests/). Before the tick that applies them, the
// executors concerned are stopped; after it, the request files go and dropped lanes are
// moved to the trash.

/** How often the folder of requests is looked at. */
export const REQUEST_POLL_MS = 250;

export interface WaysOutDeps {
  worktrees: WorktreePort;
  store: CoordinatorStorePort;
  runner: ExecutorRunner;
  /** Something to do: the loop should tick. */
  wake: () => void;
  notice: (text: string) => void;
}

export interface WaysOutInput {
  drops: DropRequest[];
  cancel?: { reason: string };
}

export class WaysOut {
  private drops: DropRequest[] = [];
  private cancelReason: string | null = null;
  /** Request files taken in, removed after the tick that applies them. */
  private readonly requestFiles = new Set<string>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly deps: WaysOutDeps) {}

  drop(taskId: string, reason?: string): void {
    this.drops.push({ task_id: taskId, ...(reason ? { reason } : {}) });
    this.deps.wake();
  }

  cancel(reason = CANCEL_REASON): void {
    this.cancelReason = reason;
    this.deps.wake();
  }

  watchRequests(): void {
    this.takeRequests();
    this.timer = setInterval(() => this.takeRequests(), REQUEST_POLL_MS);
    this.timer.unref();
  }

  stopWatching(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private takeRequests(): void {
    for (const { file, request } of this.deps.store.pendingRequests()) {
      if (this.requestFiles.has(file)) continue;
      this.requestFiles.add(file);
      crashPoint('way-out-taken', request.action);
      if (request.action === 'cancel') this.cancel(request.reason);
      else this.drop(request.task_id, request.reason);
    }
  }

  /** Stops the executors concerned, then hands over what the next tick applies. */
  async beforeTick(): Promise<{ input: WaysOutInput; files: string[] }> {
    const runner = this.deps.runner;
    if (this.cancelReason !== null) await Promise.all([...runner.live.keys()].map((t) => runner.stop(t)));
    else await Promise.all(this.drops.map((d) => runner.stop(d.task_id)));
    const files = [...this.requestFiles];
    const input: WaysOutInput = {
      drops: this.drops.splice(0),
      ...(this.cancelReason !== null ? { cancel: { reason: this.cancelReason } } : {}),
    };
    this.cancelReason = null;
    return { input, files };
  }

  /** The tick persisted the requests: dropped lanes go to the trash, then the request files go. */
  async afterTick(files: readonly string[], children: readonly ChildRecord[]): Promise<void> {
    const { store, runner, worktrees } = this.deps;
    const dropped = children.filter((c) => c.state === 'dropped').map((c) => c.task_id);
    // (a drop that came in while the tick ran: its executor is stopped now)
    await Promise.all(dropped.filter((t) => runner.live.has(t)).map((t) => runner.stop(t)));
    const busy = (task: string) => runner.sessionOf(task)?.running === true;
    for (const t of await trashAndJournal(worktrees, store, { children }, busy)) {
      this.deps.notice(`${t.task_id}: dropped; its work is on its lane branch, its worktree in ${t.to}`);
    }
    // Last: the command that left a request waits for its file to go (done, lanes trashed).
    for (const file of files) {
      store.removeRequest(file);
      this.requestFiles.delete(file);
    }
  }
}
