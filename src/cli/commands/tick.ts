import { isAbsolute, resolve } from 'node:path';
import { badInput } from '../../core/basics/errors.js';
import { ID_PATTERN } from '../../core/basics/ids.js';
import { loadPlan } from '../../store/plan-file.js';
import { checkReplan } from '../../core/ways-out/resume.js';
import { tick } from '../../core/tick/tick.js';
import type { ExitNotice, ReviewVerdict, TickInput } from '../../core/tick/tick.js';
import type { LaneOffer } from '../../core/steps/admission.js';
import { acquireBatchLock } from '../../store/lock.js';
import { findRepo } from '../../store/state-dir.js';
import { batchIdArg, parseCommand } from '../args.js';
import { batchPorts } from '../batch-run/batch-ports.js';
import { confirmedReplan } from '../start/confirm.js';
import type { CommandContext } from '../context.js';
import { formatReport } from '../batch-run/print-report.js';

export const MAX_LANE_PATH = 4096;

/** `--offer <child>=<abs path>`: the path must be absolute, without NUL, at most 4096 characters. */
export function parseOffer(text: string): LaneOffer {
  const eq = text.indexOf('=');
  const taskId = eq < 0 ? text : text.slice(0, eq);
  const path = eq < 0 ? '' : text.slice(eq + 1);
  if (!ID_PATTERN.test(taskId))
    throw badInput('usage', `--offer ${text.slice(0, 80)}: "${taskId.slice(0, 80)}" is not a child id`);
  if (path === '') throw badInput('usage', `--offer ${taskId}: expected ${taskId}=<absolute lane path>`);
  if (path.includes('\0')) throw badInput('usage', `--offer ${taskId}: the path contains a NUL byte`);
  if (path.length > MAX_LANE_PATH)
    throw badInput('usage', `--offer ${taskId}: the path is longer than ${MAX_LANE_PATH} characters`);
  if (!isAbsolute(path))
    throw badInput('usage', `--offer ${taskId}: the lane path must be absolute, got "${path}"`);
  return { task_id: taskId, path };
}

/** `--exited <child>[=<code>|=<SIGNAL>]`. */
export function parseExited(text: string): ExitNotice {
  const [taskId = '', value] = text.split('=', 2);
  if (!ID_PATTERN.test(taskId))
    throw badInput('usage', `--exited ${text.slice(0, 80)}: "${taskId.slice(0, 80)}" is not a child id`);
  if (value === undefined || value === '') return { task_id: taskId, code: null, signal: null };
  if (/^\d{1,3}$/.test(value) && Number(value) <= 255)
    return { task_id: taskId, code: Number(value), signal: null };
  if (/^SIG[A-Z0-9]+$/.test(value)) return { task_id: taskId, code: null, signal: value };
  throw badInput(
    'usage',
    `--exited ${taskId}: expected an exit code 0-255 or a signal name, got "${value.slice(0, 80)}"`,
  );
}

function parseReview(text: string): ReviewVerdict {
  const [taskId = '', verdict] = text.split('=', 2);
  if (!ID_PATTERN.test(taskId) || (verdict !== 'approve' && verdict !== 'reject'))
    throw badInput('usage', `--review expects <child>=approve or <child>=reject, got "${text.slice(0, 80)}"`);
  return { task_id: taskId, verdict: verdict === 'approve' ? 'approved' : 'rejected' };
}

/** `lanes tick <batch> [--offer ...] [--exited ...] [--review ...] [--approve [--replan <plan>]] [--json]` */
export async function tickCommand(ctx: CommandContext, argv: string[]): Promise<number> {
  const { values, positionals } = parseCommand(
    'tick',
    argv,
    {
      offer: { type: 'string', multiple: true },
      exited: { type: 'string', multiple: true },
      review: { type: 'string', multiple: true },
      approve: { type: 'boolean' },
      replan: { type: 'string' },
      json: { type: 'boolean' },
    },
    1,
  );
  const batchId = batchIdArg('tick', positionals[0]);
  if (!batchId)
    throw badInput(
      'usage',
      'usage: lanes tick <batch> [--offer <child>=<path>] [--exited <child>[=<code>]] [--json]',
    );
  if (values.replan && !values.approve)
    throw badInput('usage', 'lanes tick: --replan needs --approve (a fresh confirmation)');
  const input: TickInput = {
    offers: (values.offer ?? []).map(parseOffer),
    exited: (values.exited ?? []).map(parseExited),
    reviews: (values.review ?? []).map(parseReview),
  };
  if (values.approve) {
    input.approval = { confirmationTime: new Date().toISOString() };
    if (values.replan) input.approval.replan = loadPlan(resolve(ctx.cwd, values.replan));
  }
  const repo = await findRepo(ctx.cwd);
  const ports = batchPorts(repo, batchId);
  const record = ports.store.readRecord(); // exit 2 before any write when missing or invalid
  const known = new Set(record.children.map((c) => c.task_id));
  for (const id of [...input.exited!.map((e) => e.task_id), ...input.reviews!.map((r) => r.task_id)])
    if (!known.has(id)) throw badInput('usage', `lanes tick: batch ${batchId} has no child "${id}"`);

  if (input.approval) {
    if (!(Date.parse(input.approval.confirmationTime) > Date.parse(record.confirmation_time)))
      throw badInput(
        'usage',
        `lanes tick --approve: the confirmation is not later than the recorded ${record.confirmation_time}`,
      );
    if (input.approval.replan) {
      checkReplan(ports.store.readPlan(), input.approval.replan);
      input.approval.replan = confirmedReplan(repo.root, input.approval.replan); // (exit 2 if it cannot run)
    }
  }
  const lock = await acquireBatchLock(repo.stateDir, batchId, ['lanes', 'tick', ...argv].join(' '));
  try {
    const report = await tick(ports, input);
    ctx.stdout(values.json ? `${JSON.stringify(report)}\n` : formatReport(report));
    return 0;
  } finally {
    await lock.release();
  }
}
