import type { LaneOffer } from '../steps/admission.js';
import type { Approval } from '../ways-out/resume.js';
import type { DropRequest } from '../ways-out/ways-out.js';
import type { MachineSlots } from '../machines/machines.js';

// What one tick is told (DESIGN §4): the events the coordinator (or `lanes tick`) saw
// since the last tick, and a snapshot of what is in flight that the tick's effects are
// decided from. The effects come back in the report's handoffs; the coordinator carries
// them out and tells the next tick what came of them, as events again.

export interface ExitNotice {
  task_id: string;
  code: number | null;
  signal: string | null;
  host?: string;
  /** The kernel has this exit already, with its QA and delivery (core/steps/attempt-end.ts endAttempt). */
  recorded?: boolean;
}

/** A live agent ended its turn (its hook said so): QA runs while it waits (DESIGN §11). */
export interface TurnEndNotice {
  task_id: string;
  /** The attempt the hook's message was checked against. */
  attempt: number;
  /** The session id the message carried, recorded with the turn end in one kernel write. */
  session_id?: string | null;
}

export interface ReviewVerdict {
  task_id: string;
  verdict: 'approved' | 'rejected';
  note?: string;
}

/** A turn waiting for its verdict: the verdict needs a QA run after `qa_runs_at_turn_end`. */
export interface WaitingTurn {
  task_id: string;
  attempt: number;
  qa_runs_at_turn_end: number;
}

/** What the coordinator has in flight that the tick asks effects of (answer-turn, close-session). */
export interface InFlight {
  /** Turns waiting for their verdict. */
  waitingTurns: readonly WaitingTurn[];
  /** Live agent sessions and the rework each was last given (core/turns/turn.ts reworkKey). */
  reworkSent: readonly { task_id: string; rework_key: string }[];
  /** Live sessions that lanes could close (running, not being closed already). */
  sessions: readonly string[];
}

export interface TickInput {
  offers?: LaneOffer[];
  exited?: ExitNotice[];
  turnEnds?: TurnEndNotice[];
  reviews?: ReviewVerdict[];
  approval?: Approval;
  dispatchPaused?: boolean;
  /** Lanes the steward could not set up: the pending child is parked with the reason. */
  setupFailures?: { task_id: string; reason: string }[];
  /** `lanes drop`: these children (and their dependents) leave the batch. */
  drops?: DropRequest[];
  /** `lanes cancel`: the batch ends `cancelled`. */
  cancel?: { reason?: string };
  /**
   * Integrated children whose release the steward has in hand: the report asks for it
   * again only once it is over (a look at a lane being removed is a git call for nothing).
   */
  releasing?: readonly string[];
  /**
   * The steward's release leaves a lane with changes of its own in place by itself (`git
   * worktree remove` without --force refuses it): the report then hands off the release of
   * an integrated lane without a status of it first, except for the lanes in `keptChanged`.
   * Without it (`lanes tick`: a steward lanes does not know) every lane is looked at.
   */
  releaseChecksClean?: boolean;
  /** Integrated lanes whose last release was refused for changes of their own. */
  keptChanged?: readonly string[];
  /**
   * Enrolled children whose exit the coordinator is ending beside the loop, or has ended
   * and not handed in yet (core/steps/attempt-end.ts): observed as if their executor still
   * ran, so a tick moves a lane only for the exits it was handed.
   */
  ending?: readonly string[];
  /**
   * The coordinator's own steward acts on this report: it is asked for the effects only it
   * carries out as well (make-ahead, move-to-head, park-refused, head-moved). Without it
   * (`lanes tick`) a report hands off provision, executor and release only, as before.
   */
  coordinated?: boolean;
  /** What is in flight (the coordinator's): the report answers turns and closes sessions from it. */
  inFlight?: InFlight;
  /**
   * The machines the batch's lanes run on now, in config order, without those left out at
   * confirmation (docs/DECISIONS.md, "Machines: placement"). Absent: every lane is local,
   * exactly as before machines.
   */
  machines?: readonly MachineSlots[];
  /** Machines that do not answer now (reconnecting): their lanes are left as they are. */
  unreachableMachines?: readonly string[];
  /** Machines gone longer than machine_timeout: their lanes in flight park `machine_lost: <name>`. */
  lostMachines?: readonly string[];
}
