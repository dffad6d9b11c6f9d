import type { CoordinatorEvent } from '../../coordinator/loop/coordinator.js';
import type { Report } from '../../core/records/report.js';
import { colorState, dim } from './style.js';

// The line-per-event display of a headless run: one line when a lane starts, ends,
// changes state or needs attention — no redraws, so it reads well in a log too.

export function progressPrinter(write: (line: string) => void): (event: CoordinatorEvent) => void {
  const states = new Map<string, string>();
  const started = Date.now();
  const stamp = () => dim(`[${((Date.now() - started) / 1000).toFixed(1).padStart(6)}s]`);
  return (event) => {
    switch (event.kind) {
      case 'report':
        for (const line of stateChanges(event.report, states)) write(`${stamp()} ${line}`);
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
        write(`${stamp()} ${event.task}: lane released`);
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

function stateChanges(report: Report, seen: Map<string, string>): string[] {
  const lines: string[] = [];
  for (const child of report.children) {
    const key = `${child.state}|${child.qa_failures}`;
    if (seen.get(child.task_id) === key) continue;
    const first = !seen.has(child.task_id);
    seen.set(child.task_id, key);
    if (first && child.state === 'pending') continue;
    const extra =
      child.state === 'enrolled' && child.qa_failures > 0 ? ` (QA failures ${child.qa_failures})` : '';
    lines.push(
      `${child.task_id}: ${colorState(child.state)}${extra}${child.reason ? ` — ${child.reason}` : ''}`,
    );
  }
  const done = report.children.filter((c) => c.state === 'integrated' || c.state === 'released').length;
  if (lines.length)
    lines.push(
      `${report.batch_id}: ${colorState(report.batch_state)}, ${done}/${report.children.length} integrated`,
    );
  return lines;
}
