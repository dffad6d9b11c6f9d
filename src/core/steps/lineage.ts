import type { GitPort } from '../ports/git-port.js';
import type { BatchRecord } from '../records/record.js';

// Where the batch branch should be, and what it means when it is elsewhere (DESIGN §4 step 3).

/** The last integration commit, or base_head, then followed through adopted heads. */
export function expectedHead(record: BatchRecord): string {
  let head = record.commits.at(-1) ?? record.base_head;
  for (const adopted of record.adopted_heads) if (adopted.from === head) head = adopted.to;
  return head;
}

export type Lineage =
  | { kind: 'equal'; head: string }
  | { kind: 'fast_forward'; head: string; from: string }
  | { kind: 'broken'; reason: string };

export async function classifyLineage(git: GitPort, record: BatchRecord): Promise<Lineage> {
  const expected = expectedHead(record);
  const tip = await git.branchTip(record.branch);
  if (tip === null)
    return { kind: 'broken', reason: `batch_head_lineage_broken: ${record.branch} does not exist` };
  if (tip === expected) return { kind: 'equal', head: tip };
  // A rebuild that evicts a culprit (final-verification.ts) moved the branch to a tip that
  // does not descend from the recorded one; it is accepted only while it is being recorded.
  const fv = record.final_verification;
  if (fv?.phase === 'evict' && fv.rebuild?.from === expected && fv.rebuild.to === tip)
    return { kind: 'equal', head: tip };
  if (!(await git.isAncestor(expected, tip)))
    return {
      kind: 'broken',
      reason: `batch_head_lineage_broken: ${record.branch} is at ${tip.slice(0, 12)}, which does not descend from the recorded head ${expected.slice(0, 12)}`,
    };
  const added = await git.commitsBetween(expected, tip);
  const impostor = added.find((c) => c.trailers['Lanes-Batch'] === record.batch_id);
  if (impostor)
    return {
      kind: 'broken',
      reason: `batch_head_lineage_broken: commit ${impostor.sha.slice(0, 12)} on ${record.branch} carries "Lanes-Batch: ${record.batch_id}" but lanes did not record it`,
    };
  return { kind: 'fast_forward', head: tip, from: expected };
}
