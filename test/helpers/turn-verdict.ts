import { applyQa } from '../../src/core/records/kernel.js';
import type { StorePort } from '../../src/core/ports/store-port.js';
import type { Report } from '../../src/core/records/report.js';
import type { AgentTurns } from '../../src/coordinator/turns/agent-turns.js';
import type { Driver } from './batch.js';

/**
 * A waiting turn's QA as the tick runs it, failing (`a/x is missing`), then the tick that
 * decides its verdict from the turns waiting: its answer-turn effects are carried out.
 * Returns those effects.
 */
export async function failTurnQa(d: Driver, store: StorePort, turns: AgentTurns, task: string) {
  const read = store.readKernel(task);
  if (read.kind !== 'ok') throw new Error(`no kernel for ${task}`);
  const check = {
    id: 'ok',
    exit_code: 1,
    timed_out: false,
    duration_ms: 1,
    log_path: null,
    tail: 'a/x is missing',
  };
  const qa = { scope: [`${task}/**`], changedPaths: [`${task}/y`], checks: [check] };
  store.writeKernel(applyQa(read.record, qa, new Date().toISOString()));
  const report: Report = await d.tick({ inFlight: { ...turns.inFlight(), sessions: [] } });
  const answers = report.handoffs.filter((h) => h.action === 'answer-turn');
  for (const h of answers) turns.answer(h);
  return answers;
}
