import type { CoordinatorResult } from '../../coordinator/loop/coordinator.js';
import { reviewCommand, stoppedNextStep } from '../../core/ways-out/next-steps.js';
import type { CommandContext } from '../context.js';
import { asTyped } from '../lanes-command.js';
import { formatReport } from './print-report.js';

// What a run prints when it ends, headless or after the TUI (issue 26: leaving the TUI
// prints the same summary and next steps): the report, then each way on as a command.

export interface Ending {
  result: CoordinatorResult;
  batchId: string;
  pauseReason: string | null;
  /** The user interrupted the run (Ctrl-C, SIGTERM): the batch is left to resume. */
  interrupted?: boolean;
}

export function printEnding(ctx: Pick<CommandContext, 'stdout' | 'stderr'>, end: Ending): void {
  const { result, batchId } = end;
  const report = result.report;
  // (a run that ends while the batch still runs leaves it to the user: the way on, not the handoffs)
  const next = stoppedNextStep(report, result.waitingForReview) ?? undefined;
  ctx.stdout(asTyped(formatReport(report, next)));
  if (end.interrupted)
    ctx.stderr(
      asTyped(
        `lanes: interrupted; its executors were stopped and nothing counted against them: lanes resume ${batchId} goes on\n`,
      ),
    );
  else if (result.paused)
    ctx.stderr(asTyped(`lanes: dispatch paused (${end.pauseReason}); lanes resume ${batchId} goes on\n`));
  if (result.waitingForReview.length)
    ctx.stderr(
      `lanes: waiting for a review of ${result.waitingForReview.join(', ')}: ${result.waitingForReview
        .map((task) => asTyped(reviewCommand(batchId, task)))
        .join('; ')}\n`,
    );
}
