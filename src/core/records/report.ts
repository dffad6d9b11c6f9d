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
]);
export type Handoff = z.output<typeof handoffSchema>;

export const laneRefusalSchema = z.strictObject({
  task_id: z.string(),
  path: z.string(),
  reason: z.string(),
});
export type LaneRefusal = z.output<typeof laneRefusalSchema>;

export const reportSchema = z.strictObject({
  batch_id: z.string(),
  batch_state: z.enum(BATCH_STATES),
  max_parallel: z.number().int().positive(),
  children: z.array(childRecordSchema),
  commits: z.array(z.string()),
  reason: z.string().nullable(),
  handoffs: z.array(handoffSchema),
  lane_refusals: z.array(laneRefusalSchema),
  next_action: z.string(),
  created_at: z.string(),
});
export type Report = z.output<typeof reportSchema>;

export function isTerminal(state: BatchState): boolean {
  return TERMINAL_BATCH_STATES.has(state);
}
