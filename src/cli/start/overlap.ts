import { badInput } from '../../core/basics/errors.js';
import type { Plan } from '../../core/plan/plan.js';
import { patternsOverlap } from '../../core/plan/scope.js';
import type { RepoPaths } from '../../store/state-dir.js';
import { noBatchesHere } from '../../store/no-batches.js';

// Two batches under way in one repository whose scopes may overlap would edit the same
// files on two batch branches, and the second to land meets the first's changes (issue
// 26). Refused at confirmation — `--yes` does not skip it — unless `--allow-overlap`
// says it is meant (docs/DECISIONS.md, "Overlapping batches").

const LISTED = 4;

export async function refuseOverlaps(repo: RepoPaths, plan: Plan): Promise<void> {
  if (noBatchesHere(repo.stateDir)) return; // (no batch here: no store to load before the first frame)
  const { BatchFiles } = await import('../../store/batch-files.js');
  const { TERMINAL_BATCH_STATES } = await import('../../core/records/record.js');
  const files = new BatchFiles(repo.stateDir, plan.batch);
  const mine = [...new Set(plan.children.flatMap((c) => c.scope))];
  const clashes: string[] = [];
  for (const id of files.store.list()) {
    const record = files.store.read(id);
    if (id === plan.batch || !record || TERMINAL_BATCH_STATES.has(record.batch_state)) continue;
    let theirs: string[];
    try {
      theirs = [...new Set(new BatchFiles(repo.stateDir, id).readPlan().children.flatMap((c) => c.scope))];
    } catch {
      continue; // (a batch whose plan cannot be read says so itself, on its own commands)
    }
    const pairs = mine.flatMap((a) => theirs.filter((b) => patternsOverlap(a, b)).map((b) => `${a} ~ ${b}`));
    if (pairs.length === 0) continue;
    const shown = pairs.slice(0, LISTED).join(', ') + (pairs.length > LISTED ? ', …' : '');
    clashes.push(`batch "${id}" (${record.batch_state}): ${shown}`);
  }
  if (clashes.length === 0) return;
  throw badInput(
    'preflight_failed',
    `the scopes of batch "${plan.batch}" may overlap those of a batch under way here (this plan's glob ~ theirs): ` +
      `${clashes.join('; ')}. Finish, cancel or clean that batch first, or pass --allow-overlap to run both on purpose`,
  );
}
