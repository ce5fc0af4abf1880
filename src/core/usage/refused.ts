// What a real model can spend (PLAUSIBLE), and the records refused as
// implausible or unseen (`usage.refused`): counted, never booked.

import { REFUSED_REASONS, USAGE_LIMITS, type UsageEffect, type UsageState, type UsageStep } from './model.js';
import { count } from './read.js';

/**
 * What a real model can spend, for telling a booked record from an
 * implausible one (docs/security.md, "Questions and usage"). Numbers with
 * their reasons:
 * - `recordTokens` 2,000,000: one request's input, cache and output fit in
 *   its context window, and the largest one on sale is 2M tokens (1M for
 *   Claude and GPT models);
 * - `recordCostMicros` $100: a full 1M-token context at the dearest input
 *   price in the table ($15/M) plus 128k output tokens at the dearest output
 *   price ($75/M) is under $25; $100 leaves room for dearer models;
 * - `sessionTokensPerMinute` 20,000,000 and `sessionCostMicrosPerMinute`
 *   $200: a session with helpers (a lead and nine, each sending a full 1M
 *   context twice a minute, cache reads included); the vendors' own highest
 *   published rate limits per organisation are below this.
 */
export const PLAUSIBLE = {
  recordTokens: 2_000_000,
  recordCostMicros: 100_000_000,
  sessionTokensPerMinute: 20_000_000,
  sessionCostMicrosPerMinute: 200_000_000,
} as const;

/** Why one model request's figures are not plausible (a PLAUSIBLE key's reason), or null when they are. */
export function implausibleRecord(t: { input: number; output: number; cacheRead: number; cacheWrite: number }, costMicros: number): string | null {
  if (t.input + t.output + t.cacheRead + t.cacheWrite > PLAUSIBLE.recordTokens) return 'tokens per record';
  if (costMicros > PLAUSIBLE.recordCostMicros) return 'cost per record';
  return null;
}

/** Records of one request refused: counted by reason. */
function usageRefused(s: UsageState, o: Record<string, unknown>): UsageEffect[] {
  const r = s.refused;
  const n = count(o.records, 1_000_000);
  if (!n) return [];
  s.count++;
  r.records += n;
  r.tokens += count(o.tokens, USAGE_LIMITS.tokens * 1000);
  r.costMicros += count(o.costMicros, USAGE_LIMITS.costMicros * 1000);
  const reasons = o.reasons && typeof o.reasons === 'object' ? (o.reasons as Record<string, unknown>) : {};
  for (const k of Object.keys(reasons).slice(0, 10)) {
    const key = (REFUSED_REASONS as readonly string[]).includes(k) ? k : 'other';
    r.reasons[key] = (r.reasons[key] ?? 0) + count(reasons[k], 1_000_000);
  }
  r.lastAt = Math.max(r.lastAt, count(o.ts, Number.MAX_SAFE_INTEGER));
  return [];
}

export const REFUSED_STEPS: Readonly<Record<string, UsageStep>> = {
  'usage.refused': usageRefused,
};
