import { badInput } from '../basics/errors.js';
import type { BatchRecord } from '../records/record.js';
import { tokensSpent } from '../steps/schedule.js';

// New limits on resume (docs/DECISIONS.md, "No dead ends"): `--budget N` raises
// budget.max_children (a budget_stopped batch goes on only so), `--parallel N` sets
// max_parallel. The fresh confirmation of the resume covers them.

export interface NewLimits {
  budget?: number;
  /** A larger budget.max_tokens (a batch the token budget stopped goes on only so). */
  maxTokens?: number;
  parallel?: number;
}

/** Why these limits cannot be applied (exit 2), or null. */
export function limitsRefusal(record: BatchRecord, limits: NewLimits): string | null {
  if (limits.budget !== undefined && limits.budget <= record.budget.max_children)
    return `--budget ${limits.budget} must be larger than the current max_children ${record.budget.max_children}`;
  if (limits.parallel !== undefined && (!Number.isInteger(limits.parallel) || limits.parallel < 1))
    return `--parallel ${limits.parallel} must be a whole number > 0`;
  const tokens = record.budget.max_tokens;
  if (
    limits.maxTokens !== undefined &&
    tokens !== undefined &&
    limits.maxTokens <= (record.tokens_spent ?? 0)
  )
    return `--max-tokens ${limits.maxTokens} must be larger than the ${record.tokens_spent} tokens spent`;
  if (record.batch_state === 'budget_stopped' && tokensSpent(record) && limits.maxTokens === undefined)
    return `batch ${record.batch_id} spent its token budget (${tokens}: ${record.tokens_spent} reported); go on with --max-tokens <n> larger than that`;
  // (a batch the child budget stopped: its tokens are within theirs)
  if (record.batch_state === 'budget_stopped' && !tokensSpent(record) && limits.budget === undefined)
    return `batch ${record.batch_id} spent its child budget (${record.budget.max_children}); go on with --budget <n> larger than that`;
  return null;
}

export function checkLimits(record: BatchRecord, limits: NewLimits): void {
  const why = limitsRefusal(record, limits);
  if (why) throw badInput('usage', `lanes resume: ${why}`);
}

export function withLimits(record: BatchRecord, limits: NewLimits): BatchRecord {
  checkLimits(record, limits);
  return {
    ...record,
    budget: {
      ...record.budget,
      max_children: limits.budget ?? record.budget.max_children,
      ...(limits.maxTokens !== undefined ? { max_tokens: limits.maxTokens } : {}),
    },
    max_parallel: limits.parallel ?? record.max_parallel,
  };
}
