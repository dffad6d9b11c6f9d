import { z } from 'zod';

// What an agent reported it spent (issue 27): tokens in and out and, where the agent gives
// one, its own cost figure. Per attempt in the kernel, summed per lane and per batch. A
// command executor reports nothing: its attempts have no usage, and lanes shows "—".

export const usageSchema = z.strictObject({
  /** Every token of input the agent counted (Claude's cache reads and writes included). */
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
  /** The agent's own figure in US dollars (Claude Code's total_cost_usd); null when it gives none. */
  cost_usd: z.number().nonnegative().nullable(),
});
export type Usage = z.output<typeof usageSchema>;

export const tokensOf = (u: Usage): number => u.input_tokens + u.output_tokens;

/** The sum of two usages; a cost is known only while every part had one. */
export function addUsage(a: Usage | null, b: Usage | null): Usage | null {
  if (!a) return b;
  if (!b) return a;
  return {
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    cost_usd: a.cost_usd === null || b.cost_usd === null ? null : a.cost_usd + b.cost_usd,
  };
}

/** What `a` has beyond `b` (a later report of the same attempt beyond an earlier one). */
export function subtractUsage(a: Usage, b: Usage | null): Usage {
  if (!b) return a;
  const cost = a.cost_usd === null || b.cost_usd === null ? a.cost_usd : Math.max(0, a.cost_usd - b.cost_usd);
  return {
    input_tokens: Math.max(0, a.input_tokens - b.input_tokens),
    output_tokens: Math.max(0, a.output_tokens - b.output_tokens),
    cost_usd: cost,
  };
}

/** The usage of every attempt that reported one (null: none did). */
export function sumUsage(attempts: readonly { usage?: Usage | null | undefined }[]): Usage | null {
  return attempts.reduce<Usage | null>((sum, a) => addUsage(sum, a.usage ?? null), null);
}

/** "12.3k tok $0.04", "850 tok", or "—" when nothing was reported. */
export function formatUsage(u: Usage | null): string {
  if (!u) return '—';
  const tokens = formatTokens(tokensOf(u));
  return u.cost_usd === null ? `${tokens} tok` : `${tokens} tok $${u.cost_usd.toFixed(2)}`;
}

/** A count of tokens in at most five characters: "850", "3.9k", "12k", "1.2M". */
export function formatTokens(t: number): string {
  return t >= 1_000_000
    ? `${(t / 1e6).toFixed(1)}M`
    : t >= 10_000
      ? `${Math.round(t / 1000)}k`
      : t >= 1000
        ? `${(t / 1000).toFixed(1)}k`
        : String(t);
}
