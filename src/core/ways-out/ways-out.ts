import { cancelBatch, CANCEL_REASON } from './cancel.js';
import { dropChildren, dropClosure, DROPPED_BY_USER, dropRefusal } from './drop.js';
import type { TickContext } from '../steps/tick-context.js';

// The tick's side of `lanes drop` and `lanes cancel`: each request moves the record by the
// pure rules of drop.ts and cancel.ts and persists before anything else looks at it. The
// lanes' worktrees are the steward's business afterwards (lanesToTrash).

export interface DropRequest {
  task_id: string;
  reason?: string;
}

export function applyDrops(ctx: TickContext, drops: readonly DropRequest[]): void {
  for (const drop of drops) {
    const child = ctx.record.children.find((c) => c.task_id === drop.task_id);
    if (child?.state === 'dropped') continue; // asked twice (a request seen again after a crash)
    const why = dropRefusal(ctx.record, drop.task_id);
    if (why) {
      ctx.journal('drop-refused', { task: drop.task_id, why });
      continue;
    }
    const before = new Set(ctx.record.children.filter((c) => c.state === 'dropped').map((c) => c.task_id));
    ctx.save(dropChildren(ctx.record, drop.task_id, drop.reason ?? DROPPED_BY_USER));
    const dropped = dropClosure(ctx.record, drop.task_id).filter((id) => !before.has(id));
    ctx.journal('dropped', { task: drop.task_id, reason: drop.reason ?? DROPPED_BY_USER, dropped });
  }
}

export function applyCancel(ctx: TickContext, reason: string = CANCEL_REASON): void {
  const before = new Set(ctx.record.children.filter((c) => c.state === 'dropped').map((c) => c.task_id));
  ctx.save(cancelBatch(ctx.record, reason));
  const dropped = ctx.record.children.filter((c) => c.state === 'dropped' && !before.has(c.task_id));
  ctx.journal('batch-cancelled', { reason, dropped: dropped.map((c) => c.task_id) });
}
