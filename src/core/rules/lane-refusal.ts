// What the coordinator does with a lane the tick refused (DESIGN §7). A lane made on an
// older batch head is moved to the head and offered again, while the report still
// provisions its child (a child before it in plan order may have taken the slot: its lane
// is then reused when its turn comes); a lane that cannot be moved parks the child like
// any other refusal. A lane for a child that is no longer startable is left alone, to be
// reused when its turn comes.

export type RefusalAction = 'move-to-head' | 'leave' | 'park';

/** `reason` is the report's (an admission reason, src/core/admission.ts). */
export function refusalAction(reason: string, stillProvisioned: boolean): RefusalAction {
  if (reason === 'batch_lane_base_mismatch') return stillProvisioned ? 'move-to-head' : 'leave';
  if (reason === 'batch_lane_unknown_child') return 'leave';
  // (a lane made on a machine that cannot take it now: the child is provisioned again where
  // placement puts it; the lane is left to the batch's clean-up on that machine)
  if (reason === 'batch_lane_wrong_machine') return 'leave';
  return 'park';
}
