import { LOCAL_MACHINE } from '../../core/basics/ids.js';
import { lanesRunning, machineOf } from '../../core/machines/machines.js';
import type { MachineState } from '../../core/machines/machines.js';
import type { BatchRecord } from '../../core/records/record.js';
import type { Report } from '../../core/records/report.js';
import type { Config } from '../../core/settings/config.js';
import { dim } from '../batch-run/style.js';

// What `lanes status` shows of machines (docs/DECISIONS.md, "Machines: placement"): each
// machine with its slots, the lanes it runs and its state as the last tick saw it; nothing
// for a batch without machines (its output is what it always was).

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
