import { badInput } from '../../core/basics/errors.js';
import { childAdvice, stoppedNextStep } from '../../core/ways-out/next-steps.js';
import type { BatchRecord } from '../../core/records/record.js';
import { INTEGRATED_STATES } from '../../core/records/record.js';
import type { Report } from '../../core/records/report.js';
import { BatchStore } from '../../store/batch-store.js';
import { readBatchUsage } from '../../store/batch-usage.js';
import { findRepo } from '../../store/state-dir.js';
import { liveLockHolder } from '../../store/lock.js';
import type { LockHolder } from '../../store/lock.js';
import { asTyped } from '../lanes-command.js';
import { batchIdArg, parseCommand } from '../args.js';
import type { CommandContext } from '../context.js';
import { bold, colorState, dim } from '../batch-run/style.js';
import { loadConfig } from '../../store/config-file.js';
import type { Config } from '../../core/settings/config.js';
import { LOCAL_MACHINE } from '../../core/basics/ids.js';
import { lanesRunning, machineOf } from '../../core/machines/machines.js';
import type { MachineState } from '../../core/machines/machines.js';

/**
 * `lanes status [<batch>] [--json]`. Without a batch: the only batch there is, or a
 * one-line-per-batch list when there are several. Read-only.
 */
export async function status(ctx: CommandContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand('status', argv, { json: { type: 'boolean' } }, 1);
  const requested = batchIdArg('status', positionals[0]);
  const repo = await findRepo(ctx.cwd);
  const store = new BatchStore(repo.stateDir);
  const ids = requested ? [requested] : store.list();

  if (requested && store.read(requested) === null)
    throw badInput('state_missing', `no batch named "${requested}"`);
  if (ids.length === 1) {
    const id = ids[0] as string;
    const record = store.read(id) as BatchRecord;
    const report = store.readReport(id);
    // (usage: what the agents reported they spent, per attempt, child and batch)
    const usage = readBatchUsage(repo.stateDir, record);
    const machines = machineLines(record, report, readableConfig(repo.root));
    if (values.json)
      ctx.stdout(`${JSON.stringify({ record, report, usage, ...(machines ? { machines } : {}) })}\n`);
    else ctx.stdout(asTyped(describeBatch(record, report, liveLockHolder(repo.stateDir, id), machines)));
    return 0;
  }
  const all = ids.map((id) => ({ record: store.read(id) as BatchRecord, report: store.readReport(id) }));
  if (values.json) ctx.stdout(`${JSON.stringify({ batches: all })}\n`);
  else if (all.length === 0) ctx.stdout('no batches in this repository\n');
  else ctx.stdout(all.map(({ record }) => summaryLine(record)).join('\n') + '\n');
  return 0;
}

function summaryLine(record: BatchRecord, runner?: string): string {
  const done = record.children.filter((c) => INTEGRATED_STATES.has(c.state)).length;
  return `${bold(record.batch_id)}  ${colorState(record.batch_state)}${runner ?? ''}  ${done}/${record.children.length} integrated  ${dim(`updated ${record.updated_at}`)}`;
}

/**
 * A batch that is not terminal is run by the process holding its lock, or by nobody
 * (after \`q\`, Ctrl-C, kill -9, or a headless run that left a review waiting): said
 * beside the state, and the next step is then the command that goes on.
 */
function runnerNote(record: BatchRecord, holder: LockHolder | null): { note: string; next: string | null } {
  const open = record.batch_state === 'running' || record.batch_state === 'prepared';
  if (holder)
    return {
      note: ` — run by pid ${holder.pid} (${holder.command}) since ${holder.acquired_at}`,
      next: null,
    };
  return open ? { note: ' — stopped: no lanes process runs it', next: null } : { note: '', next: null };
}

/** The config for what status shows of machines: a config that does not parse shows none (status only reads). */
function readableConfig(root: string): Config | null {
  try {
    return loadConfig(root);
  } catch {
    return null;
  }
}

function describeBatch(
  record: BatchRecord,
  report: Report | null,
  holder: LockHolder | null,
  machines: MachineLine[] | null = null,
): string {
  const { note } = runnerNote(record, holder);
  const lines = [
    summaryLine(record, note),
    dim(`branch ${record.branch} from ${record.base_head.slice(0, 12)}`),
    ...(machines ? describeMachines(machines) : []),
  ];
  const width = Math.max(...record.children.map((c) => c.task_id.length));
  for (const child of record.children) {
    const extra = [
      machines && child.lane !== null ? childMachine(child) : null,
      child.commit ? `commit ${child.commit.slice(0, 12)}` : null,
      child.qa_failures ? `QA failures ${child.qa_failures}` : null,
      child.reason ? `reason: ${child.reason}` : null,
    ].filter(Boolean);
    lines.push(
      `  ${child.task_id.padEnd(width)}  ${colorState(child.state)}${extra.length ? `  ${extra.join(', ')}` : ''}`,
    );
    // What the user can do next with a parked child, from the record itself.
    if (child.state === 'needs_human') lines.push(`  ${' '.repeat(width)}  → ${childAdvice(record, child)}`);
  }
  const fv = record.final_verification;
  if (fv)
    lines.push(
      `final verification: ${fv.phase}${fv.failing.length ? ` (red: ${fv.failing.join(', ')}; commits ${fv.good + 1}..${fv.bad} left)` : ''}, ${fv.runs} run${fv.runs === 1 ? '' : 's'}`,
    );
  const reviewing = (report?.handoffs ?? [])
    .filter((h) => h.action === 'executor' && h.next_obligation === 'review')
    .map((h) => h.task_id);
  const stopped = holder ? null : stoppedNextStep(record, reviewing);
  if (holder && (record.batch_state === 'running' || record.batch_state === 'prepared'))
    lines.push(
      `next: wait for it (lanes log ${record.batch_id} --follow), or lanes cancel ${record.batch_id}`,
    );
  else if (stopped) lines.push(`next: ${stopped}`);
  else if (report) lines.push(`next: ${report.next_action}`);
  return `${lines.join('\n')}\n`;
}

// What status shows of machines (docs/DECISIONS.md, "Machines: placement"): each machine
// with its slots, the lanes it runs and its state as the last tick saw it; nothing for a
// batch without machines (its output is what it always was).

export interface MachineLine {
  name: string;
  slots: number | null;
  running: number;
  /** The lanes in flight on it. */
  lanes: string[];
  /** As the last report saw it (null: not known, e.g. a batch not run since it was confirmed). */
  state: MachineState | null;
}

/** The batch's machines, or null when it has none (no machines configured, no lane on one). */
export function machineLines(
  record: BatchRecord,
  report: Report | null,
  config: Config | null,
): MachineLine[] | null {
  const seen = report?.machines;
  const configured = config?.machines;
  const onMachines = record.children.some((c) => c.machine !== undefined);
  if (!seen && !configured && !onMachines) return null;
  const names = [
    ...(configured ?? []).map((m) => m.name),
    ...(seen ?? []).map((m) => m.name),
    ...record.children.flatMap((c) => (c.lane !== null ? [machineOf(c)] : [])),
  ].filter((name, i, all) => all.indexOf(name) === i);
  const running = lanesRunning(record);
  return names.map((name) => {
    const status = seen?.find((m) => m.name === name);
    const slots = status?.slots ?? configured?.find((m) => m.name === name)?.slots ?? null;
    // (a configured machine the coordinator's pool did not have was left out at its start)
    const state: MachineState | null = status?.state ?? (seen && slots !== null ? 'left out' : null);
    return {
      name,
      slots,
      running: running.get(name) ?? 0,
      lanes: record.children
        .filter((c) => c.lane !== null && machineOf(c) === name && !['released', 'dropped'].includes(c.state))
        .map((c) => c.task_id),
      state,
    };
  });
}

/** One text line a machine: `machine box-a  2/4 slots  ready  (T1, T3)`. */
export function describeMachines(lines: readonly MachineLine[]): string[] {
  const width = Math.max(...lines.map((m) => m.name.length));
  return lines.map((m) => {
    const slots = m.slots === null ? `${m.running} running` : `${m.running}/${m.slots} slots`;
    const lanes = m.lanes.length ? `  ${dim(`(${m.lanes.join(', ')})`)}` : '';
    return `machine ${m.name.padEnd(width)}  ${slots}${m.state ? `  ${m.state}` : ''}${lanes}`;
  });
}

/** A child's machine, for its status line (`on box-a`; local shown too once the batch has machines). */
export function childMachine(child: BatchRecord['children'][number]): string {
  return `on ${child.machine ?? LOCAL_MACHINE}`;
}
