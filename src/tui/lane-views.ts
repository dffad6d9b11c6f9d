import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { git, splitNul } from '../git/runner/git.js';
import type { BatchFiles } from '../store/batch-files.js';

// The text behind `d` (a lane's diff) and `l` (its latest QA log). Both run off the
// render path: the TUI awaits them and shows the result when it comes.

const LOG_TAIL_LINES = 300;

export async function laneDiff(files: BatchFiles, repoRoot: string, taskId: string): Promise<string> {
  const child = files.readRecord().children.find((c) => c.task_id === taskId);
  if (!child) return `no child ${taskId}`;
  if (child.commit)
    return (await git(repoRoot, ['show', '--stat', '--patch', '--no-color', child.commit])).stdout;
  const lane = child.lane;
  if (!lane || !existsSync(lane.path)) return `${taskId} has no lane yet (${child.state})`;
  const tracked = (await git(lane.path, ['diff', '--no-color', '--no-ext-diff', lane.base_head, '--']))
    .stdout;
  const untracked = splitNul(
    (await git(lane.path, ['ls-files', '--others', '--exclude-standard', '-z'])).stdout,
  );
  const added: string[] = [];
  for (const path of untracked) {
    const out = await git(lane.path, ['diff', '--no-color', '--no-index', '--', '/dev/null', path], {
      okCodes: [1],
    });
    added.push(out.stdout);
  }
  const text = [tracked, ...added].join('').trimEnd();
  return text === '' ? `${taskId}: no change in the lane yet` : text;
}

export function laneQaLog(files: BatchFiles, taskId: string): string {
  const read = files.readKernel(taskId);
  if (read.kind !== 'ok') return `${taskId} has no lane kernel record yet`;
  const run = read.record.qa_runs.at(-1);
  if (!run) return `${taskId}: no QA run yet (next: ${read.record.next_obligation})`;
  const out = [`QA run ${run.n} at ${run.at}: ${run.passed ? 'passed' : 'failed'}`];
  if (run.empty_delivery) out.push('empty delivery: the lane changed nothing');
  if (run.outside_scope.length) out.push(`outside the scope: ${run.outside_scope.join(', ')}`);
  for (const check of run.checks) {
    const verdict = check.timed_out ? 'timed out' : `exit ${check.exit_code ?? '?'}`;
    out.push('', `── ${check.id}: ${verdict} in ${check.duration_ms} ms ──`);
    const text =
      check.log_path && existsSync(check.log_path) ? readFileSync(check.log_path, 'utf8') : check.tail;
    out.push(...text.split('\n').slice(-LOG_TAIL_LINES));
  }
  if (read.record.rework_feedback) out.push('', '── rework prompt ──', read.record.rework_feedback);
  out.push(...integrationLogs(files.tasks.logDir(taskId)));
  return out.join('\n');
}

/** The output of the last re-verification of a merged tree (integration-<candidate>-*.log), if any. */
function integrationLogs(logDir: string): string[] {
  if (!existsSync(logDir)) return [];
  const logs = readdirSync(logDir)
    .filter((name) => name.startsWith('integration-') && name.endsWith('.log'))
    .map((name) => ({ name, at: statSync(join(logDir, name)).mtimeMs }))
    .sort((a, b) => a.at - b.at);
  const last = logs.at(-1);
  if (!last) return [];
  const candidate = last.name.split('-')[1];
  const out = ['', `── re-verification of the merged tree ${candidate} ──`];
  for (const log of logs.filter((l) => l.name.split('-')[1] === candidate)) {
    out.push(`── ${log.name} ──`);
    out.push(...readFileSync(join(logDir, log.name), 'utf8').split('\n').slice(-LOG_TAIL_LINES));
  }
  return out;
}
