import type { CoordinatorEvent } from '../../coordinator/loop/coordinator.js';
import type { StorePort } from '../../core/ports/store-port.js';
import type { Report } from '../../core/records/report.js';
import { parkLine, qaFailureLines } from './stop-lines.js';
import { colorState, dim } from './style.js';

// The line-per-event display of a headless run: one line when a lane starts, ends,
// changes state or needs attention — no redraws, so it reads well in a log too. Each
// thing is said once: a release once (the lane's removal and the state are one event to
// the user), the batch line only when it changes. With the batch's files, a QA failure
// says which check failed (its output's tail) or which paths were outside the scope, and
// a park says the way on.

export function progressPrinter(
  write: (line: string) => void,
  files?: StorePort,
): (event: CoordinatorEvent) => void {
  const seen = { states: new Map<string, string>(), released: new Set<string>(), batch: '' };
  const started = Date.now();
  const stamp = () => dim(`[${((Date.now() - started) / 1000).toFixed(1).padStart(6)}s]`);
  return (event) => {
    switch (event.kind) {
      case 'report':
        for (const line of stateChanges(event.report, seen, files)) write(`${stamp()} ${line}`);
        return;
      case 'provisioned':
        write(`${stamp()} ${event.task}: lane ready at ${event.path}`);
        return;
      case 'launched':
        write(`${stamp()} ${event.task}: executor started (attempt ${event.attempt}, ${event.session.host})`);
        return;
      case 'exited':
        write(
          `${stamp()} ${event.task}: executor exited (${event.signal ?? `code ${event.code ?? '?'}`}); running QA`,
        );
        return;
      case 'released':
        if (!seen.released.has(event.task)) write(`${stamp()} ${event.task}: ${colorState('released')}`);
        seen.released.add(event.task);
        return;
      case 'health':
        if (event.what === 'stalled')
          write(`${stamp()} ${event.task}: stalled (no output and no file change)`);
        if (event.what === 'waiting') write(`${stamp()} ${event.task}: waiting for input`);
        if (event.what === 'drift')
          write(
            `${stamp()} ${event.task}: changed paths outside its scope: ${event.health.drift.join(', ')}`,
          );
        return;
      case 'paused':
        write(`${stamp()} dispatch paused: ${event.why}`);
        return;
      case 'notice':
        write(`${stamp()} ${event.text}`);
        return;
    }
  };
}

interface Seen {
  states: Map<string, string>;
  released: Set<string>;
  batch: string;
}

function stateChanges(report: Report, seen: Seen, files: StorePort | undefined): string[] {
  const lines: string[] = [];
  for (const child of report.children) {
    const key = `${child.state}|${child.qa_failures}`;
    const before = seen.states.get(child.task_id);
    if (before === key) continue;
    seen.states.set(child.task_id, key);
    if (before === undefined && child.state === 'pending') continue;
    const failedAgain = child.qa_failures > Number(before?.split('|')[1] ?? 0);
    if (failedAgain && files) lines.push(...qaFailureLines(files, child.task_id));
    if (child.state === 'released') {
      if (seen.released.has(child.task_id)) continue;
      seen.released.add(child.task_id);
    }
    const extra =
      child.state === 'enrolled' && child.qa_failures > 0 ? ` (QA failures ${child.qa_failures})` : '';
    lines.push(
      `${child.task_id}: ${colorState(child.state)}${extra}${child.reason ? ` — ${child.reason}` : ''}`,
    );
    const park = child.state === 'needs_human' && files ? parkLine(files, child.task_id) : null;
    if (park) lines.push(park);
  }
  const done = report.children.filter((c) => c.state === 'integrated' || c.state === 'released').length;
  const batch = `${report.batch_id}: ${colorState(report.batch_state)}, ${done}/${report.children.length} integrated`;
  if (batch === seen.batch || (lines.length === 0 && seen.batch === '')) return lines;
  seen.batch = batch;
  lines.push(batch);
  return lines;
}
