import { abandonAttempt } from '../../core/records/kernel.js';
import { diedOfSignal } from '../../core/rules/lost-attempt.js';
import type { Attempt, KernelRecord } from '../../core/records/kernel.js';
import type { Clock } from '../../core/ports/clock.js';
import type { CoordinatorStorePort } from '../../core/ports/store-port.js';
import type { HandoffOf } from '../../core/records/report.js';
import { readExitStatus } from '../../hosts/exit-status.js';
import type { ExitInfo, Host, LaneSession } from '../../hosts/host.js';
import type { ExitQueue } from './exit-queue.js';
import { lookForAttempt, processGone } from './executor-recovery.js';
import type { Live, RunnerEvents } from './live.js';

// An executor from before a restart found again (DESIGN §7): ended (its status file: the
// exit queued for the tick), still running (its Herdr tab, tracked again; or its pid,
// waited for), or lost (the attempt abandoned, relaunched in the same lane).

type ExecutorHandoff = HandoffOf<'executor'>;

export interface ReattachDeps {
  host: Host;
  store: CoordinatorStorePort;
  clock: Clock;
  queue: ExitQueue;
  live: Map<string, Live>;
  events: RunnerEvents;
  track(h: ExecutorHandoff, session: LaneSession, statusPath: string | null): void;
  watchLane(h: ExecutorHandoff, session: LaneSession | null): void;
  forgetWatch(task: string): void;
  onExit(h: ExecutorHandoff, live: Live, exit: ExitInfo): Promise<void>;
}

export class Reattach {
  constructor(private readonly deps: ReattachDeps) {}

  /** An attempt started before lanes restarted: ended (status file), still running (pid or tab), or lost. */
  async findAgain(h: ExecutorHandoff, open: Attempt): Promise<'ended' | 'running' | 'lost'> {
    const found = await lookForAttempt(this.deps.host, open, this.deps.store.logDir(h.task_id), h);
    const task = h.task_id;
    if (found.kind === 'ended' && diedOfSignal(found.exit)) return 'lost'; // (core/rules/lost-attempt.ts)
    if (found.kind === 'ended') {
      this.deps.queue.push({
        task_id: task,
        code: found.exit.code,
        signal: found.exit.signal,
        host: open.host,
      });
      this.deps.store.journal('executor-reattached', {
        task,
        attempt: open.n,
        ended: true,
        code: found.exit.code,
      });
      return 'ended';
    }
    if (found.kind === 'pane') {
      this.deps.track(h, found.session, open.status_path);
      this.deps.store.journal('executor-reattached', { task, attempt: open.n, pane: open.pane_id });
      this.deps.events.launched(task, open.n, found.session);
      return 'running';
    }
    if (found.kind === 'pid') {
      this.watchOrphan(h, open);
      this.deps.store.journal('executor-reattached', { task, attempt: open.n, pid: open.pid });
      return 'running';
    }
    return 'lost';
  }

  /** An executor from before a restart that still runs: wait for it through its pid and status file. */
  private watchOrphan(h: ExecutorHandoff, open: Attempt): void {
    const live: Live = { session: null, runId: h.run_id, startedAt: this.deps.clock.now().getTime() };
    this.deps.live.set(h.task_id, live);
    this.deps.watchLane(h, null);
    void processGone(open.pid!, open.pid_start).then(() => {
      const status = open.status_path ? readExitStatus(open.status_path) : null;
      if (!status || diedOfSignal(status)) return this.relaunchLost(h, open); // (core/rules/lost-attempt.ts)
      void this.deps.onExit(h, live, status ?? { code: null, signal: 'lost' });
    });
  }

  /**
   * An executor from before a restart vanished (no exit status, or killed by a signal): no
   * QA (a crash is no QA failure); the next tick relaunches it (an agent continuing the
   * same conversation).
   */
  private relaunchLost(h: ExecutorHandoff, open: Attempt): void {
    this.deps.forgetWatch(h.task_id);
    this.deps.live.delete(h.task_id);
    const read = this.deps.store.readKernel(h.task_id);
    if (read.kind === 'ok') this.abandon(h.task_id, read.record, open.n);
    this.deps.events.wake();
  }

  abandon(task: string, kernel: KernelRecord, attempt: number): KernelRecord {
    const next = abandonAttempt(kernel, this.deps.clock.now().toISOString());
    this.deps.store.writeKernel(next);
    this.deps.store.journal('executor-relaunched', { task, lost_attempt: attempt });
    return next;
  }
}
