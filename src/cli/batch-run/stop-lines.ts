import { checkFailed } from '../../core/records/kernel.js';
import type { StorePort } from '../../core/ports/store-port.js';
import { childAdvice } from '../../core/ways-out/next-steps.js';
import { asTyped } from '../lanes-command.js';

// Why a lane stopped, in the words a headless run prints at once (issue 26: "every stop
// says why where the user looks"): the checks that failed with the tail of their output,
// the paths outside the scope, and for a park its reason and the way on.

const TAIL_LINES = 6;

/** The last QA run of a child, when it failed: one headline, then the tail of each failed check. */
export function qaFailureLines(files: StorePort, task: string): string[] {
  const read = files.readKernel(task);
  if (read.kind !== 'ok') return [];
  const run = read.record.qa_runs.at(-1);
  if (!run || run.passed) return [];
  const failed = run.checks.filter(checkFailed);
  const why = [
    ...failed.map((c) => `check ${c.id} ${c.timed_out ? 'timed out' : `exit ${c.exit_code ?? '?'}`}`),
    ...(run.outside_scope.length ? [`outside the scope: ${run.outside_scope.join(', ')}`] : []),
    ...(run.empty_delivery ? ['empty delivery: the lane changed nothing'] : []),
  ];
  const lines = [`${task}: QA failed: ${why.join('; ') || 'see lanes log --task ' + task}`];
  for (const check of failed) {
    const tail = telling(check.tail.trimEnd().split('\n'));
    if (tail.length === 0 || (tail.length === 1 && tail[0] === '')) continue;
    lines.push(`    ${check.id} │ ${tail.join(`\n    ${check.id} │ `)}`);
  }
  return lines;
}

/**
 * The lines of a check's tail that say most: from the first line that names a failure
 * (a test runner's summary at the very end says only "fail 1"), else the last lines.
 */
function telling(lines: string[]): string[] {
  const first = lines.findIndex((l) => FAILURE_WORDS.test(l) && !/^#\s*fail\s+\d/.test(l));
  return first >= 0 ? lines.slice(first, first + TAIL_LINES + 4) : lines.slice(-TAIL_LINES);
}

const FAILURE_WORDS = /\b(not ok|error|fail(ed|ure|s)?|assert\w*|expected)\b/i;

/** A parked child: the way on (its reason is on the state line before it). */
export function parkLine(files: StorePort, task: string): string | null {
  const record = files.readRecord();
  const child = record.children.find((c) => c.task_id === task);
  if (child?.state !== 'needs_human') return null;
  return `  → ${asTyped(childAdvice(record, child))}`;
}
