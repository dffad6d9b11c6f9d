import { badInput } from '../basics/errors.js';
import { LOCAL_MACHINE } from '../basics/ids.js';
import { machineOf } from '../machines/machines.js';
import type { BatchRecord } from '../records/record.js';
import { moveChild } from '../records/transitions.js';
import type { TickContext } from '../steps/tick-context.js';

// `lanes resume --approve --move <child>=<machine>` (docs/DECISIONS.md, "Machines:
// placement"): a parked child starts again from its base on another machine. Its old lane
// is not removed (the work on it is kept on its branch there, nothing is lost); the child
// is pending again, pinned to the new machine, and takes a new lane there when it starts.

export interface MoveRequest {
  task_id: string;
  machine: string;
}

/** Parses `<child>=<machine>` (the command line's --move), or says what is wrong with it. */
export function parseMove(text: string): MoveRequest | string {
  const at = text.indexOf('=');
  if (at <= 0 || at === text.length - 1) return `--move ${JSON.stringify(text)}: expected <child>=<machine>`;
  return { task_id: text.slice(0, at), machine: text.slice(at + 1) };
}

/**
 * Why this move cannot be made (exit 2), or null. `machines`: the names of the machines the
 * batch may run on (the config's, or "local" alone without machines); `away`: those not
 * answering now.
 */
export function moveRefusal(
  record: BatchRecord,
  move: MoveRequest,
  machines: readonly string[],
  away: ReadonlySet<string> = new Set(),
): string | null {
  const child = record.children.find((c) => c.task_id === move.task_id);
  if (!child)
    return `--move ${move.task_id}=${move.machine}: no child "${move.task_id}" in batch ${record.batch_id}`;
  if (!machines.includes(move.machine))
    return `--move ${move.task_id}=${move.machine}: "${move.machine}" is not a machine of lanes.config.json (machines: ${machines.join(', ')})`;
  if (child.state !== 'needs_human')
    return `--move ${move.task_id}=${move.machine}: child ${move.task_id} is ${child.state}; only a parked child is moved`;
  if (away.has(move.machine))
    return `--move ${move.task_id}=${move.machine}: machine "${move.machine}" does not answer now`;
  if (child.lane !== null && machineOf(child) === move.machine)
    return `--move ${move.task_id}=${move.machine}: its lane is on "${move.machine}" already; lanes resume --approve resumes it there`;
  return null;
}

/** Throws a usage error (exit 2) for the first move that cannot be made, or for a child named twice. */
export function checkMoves(
  record: BatchRecord,
  moves: readonly MoveRequest[],
  machines: readonly string[],
  away?: ReadonlySet<string>,
): void {
  const seen = new Set<string>();
  for (const move of moves) {
    if (seen.has(move.task_id)) throw badInput('usage', `lanes resume: --move names ${move.task_id} twice`);
    seen.add(move.task_id);
  }
  for (const move of moves) {
    const why = moveRefusal(record, move, machines, away);
    if (why) throw badInput('usage', `lanes resume: ${why}`);
  }
}

/** The tick's side of the moves: checked against the pool first (nothing moves if one cannot), then made. */
export function checkMovesIn(ctx: TickContext, moves: readonly MoveRequest[]): void {
  const pool = ctx.machines;
  const names = pool ? pool.machines.map((m) => m.name) : [LOCAL_MACHINE];
  checkMoves(ctx.record, moves, names, pool ? new Set([...pool.unreachable, ...pool.lost]) : new Set());
}

/** Makes the moves (checkMovesIn first). */
export function applyMoves(ctx: TickContext, moves: readonly MoveRequest[]): void {
  for (const move of moves) {
    const child = ctx.child(move.task_id);
    const from = machineOf(child);
    ctx.save(moveChild(ctx.record, move.task_id, move.machine));
    // (the old lane stays where it is: the journal names it, so that it can be found)
    ctx.journal('moved', {
      task: move.task_id,
      from,
      to: move.machine,
      ...(child.lane ? { lane_path: child.lane.path, lane_branch: child.lane.branch } : {}),
    });
  }
}
