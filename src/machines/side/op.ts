import { isLanesError } from '../../core/basics/errors.js';
import { formatIssues } from '../../core/basics/issues.js';
import { OP_ARGS, requestEnvelopeSchema } from '../protocol.js';
import type { MachineAnswer, MachineOp, ParsedOpArgs } from '../protocol.js';
import { cleanBatch } from './batch-clean.js';
import { readFileOp, writeFileOp } from './files.js';
import { hello } from './hello.js';
import { isLaneOp, runLaneOp } from './lane-ops.js';
import { BadRequest, placeOf } from './place.js';
import type { Place } from './place.js';
import { prepareOp, runChecksOp } from './qa-ops.js';
import { killSession, listSessions, startSession } from './sessions.js';

// One request to its answer: read and checked against the protocol (src/machines/protocol.ts;
// what is wrong named by its field), then run. A request that cannot be read is
// `bad_request` (exit 2); an op that fails is its error's code and message.

export interface Parsed {
  op: MachineOp;
  root: string;
  repo: string | undefined;
  args: unknown;
}

export function parseRequest(text: string): Parsed {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new BadRequest(`the request is not JSON: ${(error as Error).message}`);
  }
  const envelope = requestEnvelopeSchema.safeParse(raw);
  if (!envelope.success)
    throw new BadRequest(`the request is invalid: ${formatIssues(envelope.error).join('; ')}`);
  const { op, root, repo } = envelope.data;
  const args = OP_ARGS[op].safeParse(envelope.data.args);
  if (!args.success) throw new BadRequest(`${op}: ${formatIssues(args.error, 'args').join('; ')}`);
  return { op, root, repo, args: args.data };
}

type Other = Exclude<MachineOp, Parameters<typeof runLaneOp>[0]>;
const OTHER_OPS: { [Op in Other]: (args: ParsedOpArgs<Op>, place: Place) => unknown } = {
  hello: (_, place) => hello(place),
  'qa.runChecks': runChecksOp,
  'qa.prepare': prepareOp,
  'session.start': startSession,
  'session.list': listSessions,
  'session.kill': killSession,
  'file.read': (args) => readFileOp(args),
  'file.write': writeFileOp,
  'batch.clean': cleanBatch,
};

export async function runRequest(request: Parsed): Promise<unknown> {
  const place = placeOf(request.root, request.repo);
  if (request.op === 'batch.clean' && place.cache === null)
    throw new BadRequest('batch.clean: the request names no repository (repo)');
  if (isLaneOp(request.op)) return runLaneOp(request.op, request.args as never, place);
  const run = OTHER_OPS[request.op as Other] as (args: unknown, place: Place) => unknown;
  return run(request.args, place);
}

/** The answer to a request's text, and the exit code (2 for a request that cannot be read). */
export async function answer(text: string): Promise<{ answer: MachineAnswer; exitCode: number }> {
  try {
    const request = parseRequest(text);
    return { answer: { ok: true, value: (await runRequest(request)) ?? null }, exitCode: 0 };
  } catch (error) {
    const code = isLanesError(error) ? error.code : 'failed';
    const message = error instanceof Error ? error.message : String(error);
    return { answer: { ok: false, code, message }, exitCode: error instanceof BadRequest ? 2 : 1 };
  }
}
