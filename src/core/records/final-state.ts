import { z } from 'zod';
import { shaSchema, storedIdSchema } from '../basics/ids.js';

// The persisted state of the whole batch's final verification (docs/DECISIONS.md "Final
// verification"): which tip is verified, how far the bisection has come, and the rebuild
// of the batch branch that evicts a culprit. It lives in the batch record and is written
// before every final-check run and before the batch branch moves, so a crash resumes the
// verification where it was, never from the start.

const sha = shaSchema;
const id = storedIdSchema;

export const FINAL_PHASES = ['verify', 'bisect', 'evict', 'verify_rebuilt'] as const;
export type FinalPhase = (typeof FINAL_PHASES)[number];

export const rebuildSchema = z.strictObject({
  /** The batch tip before the rebuild (kept under a ref until the new tip is recorded). */
  from: sha,
  /** The rebuilt tip. */
  to: sha,
  culprit: id,
  /** The culprit, its dependents and any child that no longer merged without it. */
  evicted: z.array(id),
  /** The children re-integrated onto the last good commit, with their new commits, in order. */
  commits: z.array(z.strictObject({ task_id: id, commit: sha })),
  /** Children whose lane commit conflicted on the rebuilt branch. */
  conflicts: z.array(z.strictObject({ task_id: id, paths: z.array(z.string()) })),
});
export type Rebuild = z.output<typeof rebuildSchema>;

export const finalVerificationSchema = z.strictObject({
  phase: z.enum(FINAL_PHASES),
  /** The batch tip whose final checks went (or go) red; the rebuilt tip in `verify_rebuilt`. */
  tip: sha,
  /** The integration commits in integration order when the verification began. */
  commits: z.array(sha),
  /** The final checks failing on `tip` (empty until it ran red). */
  failing: z.array(id),
  /** Prefix lengths of `commits`: the first `good` are known green, the first `bad` known red. */
  good: z.number().int().nonnegative(),
  bad: z.number().int().nonnegative(),
  /** Final-check runs made by this verification. */
  runs: z.number().int().nonnegative(),
  rebuild: rebuildSchema.nullable(),
});
export type FinalVerification = z.output<typeof finalVerificationSchema>;

/** What the verification's own fields must agree on (the record adds the batch-level rules). */
export function finalStateProblems(fv: FinalVerification): string[] {
  const out: string[] = [];
  if (fv.bad > fv.commits.length)
    out.push(`bad: ${fv.bad} is past the ${fv.commits.length} integration commits`);
  if (fv.phase !== 'verify' && fv.good >= fv.bad) out.push(`good: ${fv.good} is not below bad ${fv.bad}`);
  if ((fv.phase === 'bisect' || fv.phase === 'evict') && fv.failing.length === 0)
    out.push(`${fv.phase} without a failing final check`);
  if ((fv.phase === 'evict' || fv.phase === 'verify_rebuilt') && fv.rebuild === null)
    out.push(`${fv.phase} without a rebuild`);
  if (fv.rebuild && !fv.rebuild.evicted.includes(fv.rebuild.culprit))
    out.push('rebuild.evicted: does not name the culprit');
  return out;
}
