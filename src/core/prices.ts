// The price table: data only, versioned with the code. List prices in USD per
// million tokens, as each vendor published them on `date`; a model is matched
// by the longest prefix of its normalised name (src/core/usage.ts,
// `modelName`). Change `date` (and `source` if it moved) with the rows: the
// date is written on every cost priced from this table (`costFrom:
// table:<date>`), so a cost can be traced to the prices that made it. A
// project's owner overrides a row for their project (`PUT /usage/prices`,
// docs/integrations.md "Cost").

export interface Price {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export const PRICE_TABLE = {
  date: '2026-12-06',
  source:
    'the vendors’ published list prices per million tokens on that date: Anthropic (claude.com/pricing: input, output, cache hits as cache reads, 5-minute cache writes), OpenAI (openai.com/api/pricing: input, output, cached input; no cache-write charge), Google (ai.google.dev/gemini-api/docs/pricing: the ≤200k-token tier, context caching as cache reads)',
  rows: {
    // Opus 4.5 and later (claude-opus-4-5, -4-6, ... -4-8): the family's price since 4.5.
    'claude-opus-4': { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
    // Opus 4 and 4.1 kept their launch price (claude-opus-4-20250514, claude-opus-4-0, claude-opus-4-1...).
    'claude-opus-4-2025': { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
    'claude-opus-4-0': { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
    'claude-opus-4-1': { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
    'claude-sonnet-4': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    'claude-haiku-4': { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
    'claude-3-5-haiku': { input: 0.8, output: 4, cacheRead: 0.08, cacheWrite: 1 },
    'gpt-5-mini': { input: 0.25, output: 2, cacheRead: 0.025, cacheWrite: 0 },
    'gpt-5-nano': { input: 0.05, output: 0.4, cacheRead: 0.005, cacheWrite: 0 },
    'gpt-5': { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 0 },
    'gpt-4.1-mini': { input: 0.4, output: 1.6, cacheRead: 0.1, cacheWrite: 0 },
    'gpt-4.1': { input: 2, output: 8, cacheRead: 0.5, cacheWrite: 0 },
    'o4-mini': { input: 1.1, output: 4.4, cacheRead: 0.275, cacheWrite: 0 },
    'gemini-2.5-pro': { input: 1.25, output: 10, cacheRead: 0.31, cacheWrite: 0 },
    'gemini-2.5-flash-lite': { input: 0.1, output: 0.4, cacheRead: 0.025, cacheWrite: 0 },
    'gemini-2.5-flash': { input: 0.3, output: 2.5, cacheRead: 0.075, cacheWrite: 0 },
  } satisfies Record<string, Price>,
} as const;
