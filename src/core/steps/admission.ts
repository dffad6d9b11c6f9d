import { laneBranch } from '../basics/ids.js';
import { expectedHead } from './lineage.js';
import { NO_FACTS, type OfferFacts } from '../ports/git-port.js';
import type { BatchRecord } from '../records/record.js';
import type { LaneRefusal } from '../records/report.js';
import { pinOf, placedChildren, startableChildren } from './schedule.js';
import { LOCAL_MACHINE } from '../basics/ids.js';
import { lanesRunning } from '../machines/machines.js';
import type { MachinePool } from '../machines/machines.js';
import { machineRefusal } from '../machines/placement.js';
import type { TickContext } from './tick-context.js';
import { admitLane } from '../records/transitions.js';
import { enrollAdmitted } from './observe.js';
import type { Plan } from '../plan/plan.js';

// Tick step 6: lanes offered by the steward are admitted or refused with exactly one
// reason, decided from facts git gives about the offered path. A refusal writes nothing.

export type AdmissionReason =
  | 'batch_lane_foreign_repository'
  | 'batch_lane_is_coordinator'
  | 'batch_lane_branch_mismatch'
  | 'batch_lane_base_mismatch'
  | 'batch_lane_dirty'
  | 'batch_lane_occupied'
  | 'batch_lane_unknown_child'
  /** Made on a machine that may not take it now (full, away, or not its pin). */
  | 'batch_lane_wrong_machine';

export interface LaneOffer {
  task_id: string;
  path: string;
  /**
   * What git said of the path a moment ago, when the steward's job made it (or moved it to
   * the head): not read again. Absent for a lane offered from elsewhere: read here.
   */
  facts?: OfferFacts;
  /** The machine the lane was made on (absent: local). */
  machine?: string;
}

/** The first reason that applies, or null to admit. Pure. */
export function decideAdmission(
  record: BatchRecord,
  plan: Plan,
  offer: LaneOffer,
  facts: OfferFacts,
  coordinatorRoot: string,
  pool: MachinePool | null = null,
): AdmissionReason | null {
  if (pool === null) {
    if (!startableChildren(record, plan).includes(offer.task_id)) return 'batch_lane_unknown_child';
  } else {
    if (!placedChildren(record, plan, pool).some((p) => p.task_id === offer.task_id))
      return 'batch_lane_unknown_child';
    const machine = offer.machine ?? LOCAL_MACHINE;
    const unavailable = new Set([...pool.unreachable, ...pool.lost]);
    const running = lanesRunning(record);
    const pin = pinOf(record, plan, offer.task_id);
    if (machineRefusal(machine, pin, { machines: pool.machines, running, unavailable }))
      return 'batch_lane_wrong_machine';
  }
  if (!facts.realpath || !facts.sameRepository || !facts.isWorktreeRoot)
    return 'batch_lane_foreign_repository';
  if (facts.realpath === coordinatorRoot) return 'batch_lane_is_coordinator';
  if (facts.branch !== laneBranch(record.batch_id, offer.task_id)) return 'batch_lane_branch_mismatch';
  if (facts.head !== expectedHead(record)) return 'batch_lane_base_mismatch';
  if (!facts.clean) return 'batch_lane_dirty';
  const bound = record.children.some((c) => c.lane?.path === facts.realpath && c.state !== 'released');
  // (a path admitted earlier in the same tick is already bound in the record)
  if (bound) return 'batch_lane_occupied';
  return null;
}

export async function admitOffers(ctx: TickContext, offers: readonly LaneOffer[]): Promise<LaneRefusal[]> {
  const refusals: LaneRefusal[] = [];
  // The facts are read side by side (each read looks only at its own path); the decisions
  // are then made one offer at a time, in order, against the record as it moves.
  // A lane of a machine that does not answer is not asked for its facts (the op would wait,
  // then fail the tick): the machine refuses it first (decideAdmission).
  const pool = ctx.machines;
  const away = new Set(pool ? [...pool.unreachable, ...pool.lost] : []);
  const unasked = (o: LaneOffer) => away.has(o.machine ?? LOCAL_MACHINE);
  const allFacts = await Promise.all(
    offers.map((o) => o.facts ?? (unasked(o) ? NO_FACTS : ctx.ports.git.offerFacts(o.path))),
  );
  for (const [i, offer] of offers.entries()) {
    const facts = allFacts[i]!;
    const root = ctx.ports.git.coordinatorRoot;
    const reason = decideAdmission(ctx.record, ctx.plan, offer, facts, root, ctx.machines);
    if (reason) {
      refusals.push({ task_id: offer.task_id, path: offer.path, reason });
      ctx.journal('lane-refused', { task: offer.task_id, path: offer.path, reason });
      continue;
    }
    const path = facts.realpath!;
    const branch = laneBranch(ctx.record.batch_id, offer.task_id);
    // Admitted and enrolled in one write (the kernel record is written between): a crash
    // before it leaves the child pending, and its kernel record is adopted when the same
    // lane is offered again (enrollAdmitted).
    const admitted = admitLane(
      ctx.record,
      offer.task_id,
      { path, branch, base_head: expectedHead(ctx.record) },
      ctx.machines ? (offer.machine ?? LOCAL_MACHINE) : LOCAL_MACHINE,
    );
    enrollAdmitted(ctx, offer.task_id, {
      record: admitted,
      journal: () => ctx.journal('lane-admitted', { task: offer.task_id, path }),
    });
  }
  return refusals;
}
