import type { Handoff, HandoffOf, HeadMoved, Report } from '../../core/records/report.js';
import type { ExecutorRunner } from '../executors/executor-runner.js';
import type { ReleaseJobs } from '../lanes/release-jobs.js';
import type { StewardJobs } from '../lanes/steward-jobs.js';
import type { AgentTurns } from '../turns/agent-turns.js';
import { coordinatorThread } from './paced-ports.js';

// The coordinator carries out a report's effects here, in one switch over their kinds
// (DESIGN §4, "Effects"): the tick decided each one; what comes of it reaches the next tick
// as an event (an offer or a setup failure from the lane jobs, an exit or a turn end from
// the executors). Nothing here decides what the batch does next.

/** The order effects are carried out in: verdicts first, then the lanes being refilled, releases last. */
const ORDER: Record<Handoff['action'], number> = {
  'answer-turn': 1,
  'close-session': 2,
  'move-to-head': 3,
  'park-refused': 3,
  executor: 4,
  provision: 5,
  release: 6,
  'make-ahead': 7,
};

/** What carrying the effects out needs of the lane jobs and the executors (in-memory in tests). */
export interface EffectDeps {
  jobs: Pick<StewardJobs, 'headMoved' | 'moveToHead' | 'fail' | 'provision' | 'keepAhead'> & {
    releases: Pick<ReleaseJobs, 'release'>;
  };
  runner: Pick<ExecutorRunner, 'ensure' | 'closeSession' | 'sessionsClosed' | 'paused'> & {
    turns: Pick<AgentTurns, 'answer'>;
  };
}

export class Effects {
  /** Heads whose head-moved effect was carried out when the tick handed it out early. */
  private readonly movedEarly = new Set<string>();

  constructor(private readonly deps: EffectDeps) {}

  /** TickPorts.headMovedEarly: the report's head_moved handed out mid-tick, carried out at once. */
  headMovedEarly(moved: HeadMoved): void {
    this.movedEarly.add(moved.head);
    this.deps.jobs.headMoved(moved.head, moved.integrated);
  }

  /** Carries out every effect of a report; true when the loop should tick again at once. */
  async carryOut(report: Report): Promise<boolean> {
    const ahead: HandoffOf<'make-ahead'>[] = [];
    let again = false;
    const moved = report.head_moved;
    if (moved && !this.movedEarly.has(moved.head)) this.deps.jobs.headMoved(moved.head, moved.integrated);
    for (const h of [...report.handoffs].sort((a, b) => ORDER[a.action] - ORDER[b.action])) {
      await coordinatorThread.turn(); // (a hundred handoffs: keys between them, paced-ports.ts)
      if (await this.one(h, report, ahead)) again = true;
    }
    // The whole list each time: a lane made ahead for a child no longer in it is removed again.
    this.deps.jobs.keepAhead(this.deps.runner.paused ? [] : ahead);
    await this.deps.runner.sessionsClosed(); // (as before: the loop goes on once they are closed)
    this.movedEarly.clear();
    return again;
  }

  private async one(h: Handoff, report: Report, ahead: HandoffOf<'make-ahead'>[]): Promise<boolean> {
    const { jobs, runner } = this.deps;
    switch (h.action) {
      case 'answer-turn':
        runner.turns.answer(h);
        return false;
      case 'close-session':
        runner.closeSession(h.task_id); // (all at once; a release waits for them)
        return false;
      case 'move-to-head':
        jobs.moveToHead(h.task_id, h.lane_path);
        return false;
      case 'park-refused':
        jobs.fail({ task_id: h.task_id, reason: h.reason });
        return false;
      case 'executor':
        return runner.ensure(h);
      case 'provision':
        jobs.provision(h);
        return false;
      case 'release': {
        await runner.sessionsClosed(); // (a lane's session is closed before its lane goes)
        const commit = report.children.find((c) => c.task_id === h.task_id)?.commit;
        if (commit) jobs.releases.release(h, commit);
        return false;
      }
      case 'make-ahead':
        ahead.push(h);
        return false;
      default:
        return h satisfies never;
    }
  }
}
