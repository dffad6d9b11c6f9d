import type { Report } from '../../core/records/report.js';
import { bold, colorState, dim } from './style.js';

// A report for people: the batch state, each child, the handoffs and what to do next.

/** `next` replaces the report's next step (a run that stopped: the command that goes on). */
export function formatReport(report: Report, next?: string): string {
  const lines = [
    `${bold(report.batch_id)}  ${colorState(report.batch_state)}  ${report.commits.length} integration commits`,
  ];
  const width = Math.max(...report.children.map((c) => c.task_id.length));
  for (const c of report.children)
    lines.push(`  ${c.task_id.padEnd(width)}  ${colorState(c.state)}${c.reason ? `  ${dim(c.reason)}` : ''}`);
  for (const h of report.handoffs) {
    // (the effects only the coordinator carries out are not the reader's to act on)
    if (h.action !== 'provision' && h.action !== 'executor' && h.action !== 'release') continue;
    const where = h.action === 'provision' ? `${h.lane_branch} at ${h.base_head.slice(0, 12)}` : h.lane_path;
    lines.push(
      `  → ${h.action} ${h.task_id}: ${where}${h.action === 'executor' ? ` (${h.next_obligation})` : ''}`,
    );
  }
  for (const r of report.lane_refusals) lines.push(`  ✗ refused ${r.task_id} at ${r.path}: ${r.reason}`);
  if (report.reason) lines.push(`reason: ${report.reason}`);
  lines.push(`next: ${next ?? report.next_action}`);
  return `${lines.join('\n')}\n`;
}
