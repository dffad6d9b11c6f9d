import type { KernelRecord } from '../records/kernel.js';
import type { BatchRecord, ChildRecord } from '../records/record.js';
import { INTEGRATED_STATES } from '../records/record.js';

// Eviction after a red final verification (docs/DECISIONS.md "Final verification"): which
// children leave the batch branch, and the record once the branch is rebuilt without
// them. Pure: the git work (the rebuild, the lanes) is done through the ports before the
// record moves here.

/** The integrated child whose integration commit is `commit`, or undefined. */
export function childOfCommit(record: BatchRecord, commit: string): ChildRecord | undefined {
  return record.children.find((c) => c.commit === commit && INTEGRATED_STATES.has(c.state));
}

/** True when `child` depends, directly or through other children, on one of `evicted`. */
export function dependsOnAny(record: BatchRecord, child: ChildRecord, evicted: ReadonlySet<string>): boolean {
  const seen = new Set<string>();
  const walk = (id: string): boolean => {
    if (seen.has(id)) return false;
    seen.add(id);
    const c = record.children.find((x) => x.task_id === id);
    return (c?.blocked_by ?? []).some((dep) => evicted.has(dep) || walk(dep));
  };
  return walk(child.task_id);
}

export interface Eviction {
  /** The child whose integration first turned the final checks red. */
  culprit: string;
  culpritReason: string;
  /** Children that no longer merged onto the rebuilt branch: parked with their reason, lane back. */
  conflicts: { task_id: string; reason: string }[];
  /** The prefix of the integration commits kept as they are. */
  keptCommits: string[];
  /** The children re-integrated, with their new commits, in order. */
  replayed: { task_id: string; commit: string }[];
}

/**
 * The record after the batch branch was rebuilt: the culprit (and any child that no longer
 * merged) parked with its lane back and no lane commit, so a fix goes through QA and a new
 * delivery; every child that depends on an evicted one skipped; the re-integrated children
 * carry their new commits.
 */
export function applyEviction(record: BatchRecord, e: Eviction): BatchRecord {
  const parked = new Map<string, string>([
    [e.culprit, e.culpritReason],
    ...e.conflicts.map((c) => [c.task_id, c.reason] as [string, string]),
  ]);
  const replayed = new Map(e.replayed.map((r) => [r.task_id, r.commit]));
  const kept = new Set(e.keptCommits);
  const children = record.children.map((c): ChildRecord => {
    const reason = parked.get(c.task_id);
    if (reason !== undefined)
      return { ...c, state: 'needs_human', reason, commit: null, lane: { ...c.lane!, lane_commit: null } };
    const commit = replayed.get(c.task_id);
    if (commit !== undefined) return { ...c, commit };
    if (c.commit !== null && kept.has(c.commit)) return c;
    if (!INTEGRATED_STATES.has(c.state)) return c;
    // Integrated after the culprit and depending on an evicted child.
    const dep = c.blocked_by.find((d) => !replayed.has(d) && !isKept(record, d, kept));
    return {
      ...c,
      state: 'skipped_blocked',
      reason: `blocked by parked child ${dep ?? e.culprit}`,
      commit: null,
      lane: null,
    };
  });
  return { ...record, children, commits: [...e.keptCommits, ...e.replayed.map((r) => r.commit)] };
}

function isKept(record: BatchRecord, taskId: string, kept: ReadonlySet<string>): boolean {
  const commit = record.children.find((c) => c.task_id === taskId)?.commit;
  return commit != null && kept.has(commit);
}

/** The culprit's kernel after eviction: active again, QA due, told why it came back. */
export function reopenAfterEviction(k: KernelRecord, feedback: string, now: string): KernelRecord {
  return {
    ...k,
    lifecycle: 'active',
    next_obligation: 'run_qa',
    review: { ...k.review, verdict: null, at: null },
    qa_counted_from: k.qa_runs.length,
    rework_feedback: feedback,
    updated_at: now,
  };
}
