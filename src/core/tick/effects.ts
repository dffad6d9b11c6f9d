import type { Handoff, HandoffOf, LaneRefusal, Report } from '../records/report.js';
import { laneBranch, LOCAL_MACHINE } from '../basics/ids.js';
import { refusalAction } from '../rules/lane-refusal.js';
import { nextToStart, placedAhead } from '../steps/schedule.js';
import type { TickContext } from '../steps/tick-context.js';
import { reworkKey, reworkToType, sessionShouldClose, turnVerdict } from '../turns/turn.js';
import type { InFlight, TickInput } from './tick-input.js';

// The effects a tick asks of the coordinator beyond provision, executor and release
// (DESIGN §4, "Effects"): decided here from the record, the kernels and the snapshot of
// what is in flight, carried out by the coordinator's one switch (coordinator/loop/effects.ts).

/** The report's handoffs with the coordinator's effects added (none for `lanes tick`). */
export function withEffects(ctx: TickContext, report: Report, input: TickInput): Report {
  const effects: Handoff[] = [];
  const moved = input.coordinated && ctx.headMoved ? { head_moved: ctx.headMoved } : {};
  if (input.coordinated) {
    effects.push(...refusalEffects(report.lane_refusals, report.handoffs));
    effects.push(...makeAhead(ctx, report, !!input.dispatchPaused));
  }
  if (input.inFlight)
    effects.push(...answerTurns(ctx, input.inFlight), ...closeSessions(ctx, input.inFlight));
  return { ...report, ...moved, handoffs: [...report.handoffs, ...effects] };
}

/** What becomes of each lane the tick refused (core/rules/lane-refusal.ts). */
function refusalEffects(refusals: readonly LaneRefusal[], handoffs: readonly Handoff[]): Handoff[] {
  return refusals.flatMap((r): Handoff[] => {
    const provisioned = handoffs.some((h) => h.action === 'provision' && h.task_id === r.task_id);
    const action = refusalAction(r.reason, provisioned);
    if (action === 'move-to-head') return [{ action, task_id: r.task_id, lane_path: r.path }];
    if (action === 'park')
      return [{ action: 'park-refused', task_id: r.task_id, reason: `lane refused: ${r.reason}` }];
    return [];
  });
}

/**
 * The lanes of the children that take the next free slots (DESIGN §7, "Lanes made ahead"):
 * one for each slot at most, none while the batch does not run or dispatch is paused (the
 * coordinator removes again those made already).
 */
function makeAhead(ctx: TickContext, report: Report, paused: boolean): HandoffOf<'make-ahead'>[] {
  if (report.batch_state !== 'running' || paused) return [];
  const ahead = ctx.machines
    ? placedAhead(ctx.record, ctx.plan, ctx.machines, report.max_parallel)
    : nextToStart(ctx.record, ctx.plan, report.max_parallel).map((task_id) => ({
        task_id,
        machine: LOCAL_MACHINE,
      }));
  return ahead.map(({ task_id, machine }) => ({
    action: 'make-ahead',
    task_id,
    lane_branch: laneBranch(ctx.record.batch_id, task_id),
    machine,
  }));
}

/**
 * Every waiting turn whose QA has run gets its verdict (core/turns/turn.ts); an agent at
 * its prompt with no turn waiting gets a new rework typed in (a review rejection).
 */
function answerTurns(ctx: TickContext, inFlight: InFlight): HandoffOf<'answer-turn'>[] {
  const effects: HandoffOf<'answer-turn'>[] = [];
  const waiting = new Set(inFlight.waitingTurns.map((t) => t.task_id));
  for (const sent of inFlight.reworkSent) {
    if (waiting.has(sent.task_id)) continue;
    const child = ctx.record.children.find((c) => c.task_id === sent.task_id);
    const read = ctx.ports.store.readKernel(sent.task_id);
    if (!child || read.kind !== 'ok') continue;
    const text = reworkToType(read.record, child.state, sent.rework_key);
    if (text === null) continue;
    effects.push({
      action: 'answer-turn',
      task_id: sent.task_id,
      attempt: null,
      verdict: 'continue',
      feedback: text,
      why: null,
      rework_key: reworkKey(read.record),
    });
  }
  for (const turn of inFlight.waitingTurns) {
    const child = ctx.record.children.find((c) => c.task_id === turn.task_id);
    const read = ctx.ports.store.readKernel(turn.task_id);
    const verdict =
      child && read.kind === 'ok'
        ? turnVerdict({
            kernel: read.record,
            childState: child.state,
            qaRunsAtTurnEnd: turn.qa_runs_at_turn_end,
          })
        : ({ kind: 'stop', why: 'not-running' } as const);
    if (verdict.kind === 'pending') continue;
    effects.push({
      action: 'answer-turn',
      task_id: turn.task_id,
      attempt: turn.attempt,
      verdict: verdict.kind,
      feedback: verdict.kind === 'continue' ? verdict.feedback : null,
      why: verdict.kind === 'stop' ? verdict.why : null,
      rework_key: read.kind === 'ok' ? reworkKey(read.record) : null,
    });
  }
  return effects;
}

/** The live sessions of lanes whose work is integrated (or gone for good) are closed. */
function closeSessions(ctx: TickContext, inFlight: InFlight): HandoffOf<'close-session'>[] {
  return inFlight.sessions.flatMap((task_id): HandoffOf<'close-session'>[] => {
    const state = ctx.record.children.find((c) => c.task_id === task_id)?.state;
    return state && sessionShouldClose(state) ? [{ action: 'close-session', task_id }] : [];
  });
}
