import { z } from 'zod';
import { BATCH_STATES, childRecordSchema, TERMINAL_BATCH_STATES } from './record.js';
import type { BatchState } from './record.js';

// The stop report a tick returns and the store keeps as <batch>.report.json (DESIGN §4).

export const handoffSchema = z.discriminatedUnion('action', [
  z.strictObject({
    action: z.literal('provision'),
    task_id: z.string(),
    lane_branch: z.string(),
    base_head: z.string(),
    /** The machine the lane is made on ("local": the coordinator's; a report from before machines has none). */
    machine: z.string().default('local'),
  }),
  z.strictObject({
    action: z.literal('executor'),
    task_id: z.string(),
    run_id: z.string(),
    lane_path: z.string(),
    lane_branch: z.string(),
    next_obligation: z.enum(['implement', 'run_qa', 'review', 'none']),
  }),
  z.strictObject({
    action: z.literal('release'),
    task_id: z.string(),
    lane_branch: z.string(),
    lane_path: z.string(),
  }),
  // The effects below are asked by a coordinated tick only (TickInput.coordinated,
  // TickInput.inFlight); a report from before them, with the three above, still parses.
  /** Make the lane of a child that takes one of the next free slots before the slot frees (DESIGN §7). */
  z.strictObject({
    action: z.literal('make-ahead'),
    task_id: z.string(),
    lane_branch: z.string(),
    machine: z.string().default('local'),
  }),
  /** A lane refused because the batch head moved: move it to the head and offer it again. */
  z.strictObject({
    action: z.literal('move-to-head'),
    task_id: z.string(),
    lane_path: z.string(),
  }),
  /** A lane refused for good (it cannot be moved): the child parks (a setup failure next tick). */
  z.strictObject({
    action: z.literal('park-refused'),
    task_id: z.string(),
    reason: z.string(),
  }),
  /** A turn waiting for its verdict (or an agent waiting at its prompt for a rework) is answered. */
  z.strictObject({
    action: z.literal('answer-turn'),
    task_id: z.string(),
    /** The attempt of the waiting turn; null for a rework typed to an agent with no turn waiting. */
    attempt: z.number().int().nullable(),
    verdict: z.enum(['continue', 'stop']),
    /** The instruction sent back (continue). */
    feedback: z.string().nullable(),
    why: z.enum(['passed', 'review', 'parked', 'not-running']).nullable(),
    /** The kernel's latest rework (core/turns/turn.ts reworkKey), so that each is sent once. */
    rework_key: z.string().nullable(),
  }),
  /** The lane's work is integrated (or it is gone for good): its live session is closed. */
  z.strictObject({
    action: z.literal('close-session'),
    task_id: z.string(),
  }),
]);
export type Handoff = z.output<typeof handoffSchema>;
export type HandoffOf<A extends Handoff['action']> = Extract<Handoff, { action: A }>;

export const laneRefusalSchema = z.strictObject({
  task_id: z.string(),
  path: z.string(),
  reason: z.string(),
});
export type LaneRefusal = z.output<typeof laneRefusalSchema>;

/**
 * The tick's integrations moved the batch branch to `head` (`integrated` children, so as
 * many slots free): the coordinator brings the lanes waiting to be admitted to it. Handed
 * out the moment it is decided as well (TickPorts.headMovedEarly), so the moves run while
 * the tick goes on (DESIGN §7).
 */
export const headMovedSchema = z.strictObject({
  head: z.string(),
  integrated: z.number().int().positive(),
});
export type HeadMoved = z.output<typeof headMovedSchema>;

/** A machine of the batch as the tick saw it (a report of a batch without machines has none). */
export const machineStatusSchema = z.strictObject({
  name: z.string(),
  slots: z.number().int().positive(),
  /** Lanes in flight on it. */
  running: z.number().int().nonnegative(),
  state: z.enum(['ready', 'reconnecting', 'lost']),
});
export type MachineStatus = z.output<typeof machineStatusSchema>;

export const reportSchema = z.strictObject({
  batch_id: z.string(),
  batch_state: z.enum(BATCH_STATES),
  max_parallel: z.number().int().positive(),
  children: z.array(childRecordSchema),
  commits: z.array(z.string()),
  reason: z.string().nullable(),
  handoffs: z.array(handoffSchema),
  lane_refusals: z.array(laneRefusalSchema),
  /** Only in a report for the coordinator's own steward (TickInput.coordinated). */
  head_moved: headMovedSchema.optional(),
  /** The machines of the pool (TickInput.machines), absent without. */
  machines: z.array(machineStatusSchema).optional(),
  next_action: z.string(),
  created_at: z.string(),
});
export type Report = z.output<typeof reportSchema>;

export function isTerminal(state: BatchState): boolean {
  return TERMINAL_BATCH_STATES.has(state);
}
