// The usage fold: tokens and cost, rolled up per agent → subagent → session →
// team → project, per model and per day, and the project's budgets (see
// src/core/usage/budgets.ts).
//
// Pure and shared (server and browser fold the same events): the fold imports
// only its own parts and the price table's data (./prices.ts), no clock, no
// I/O. Time arrives on the event (`day`, `ts`).
//
// Events (the `usage` stream of a project):
//   usage            { id, agent, parent?, session, team, source, model, day,
//                      input, output, cacheRead, cacheWrite, costMicros,
//                      costFrom, requests?, accepted?, rejected?, ts }
//                    one model request (or a batch of them) an agent made;
//                    `input` is the uncached input (cache reads and writes
//                    are counted apart, as every vendor bills them apart)
//                    `reporter` (`token:<id>`, `person:<uid>`): who sent an
//                    OTLP record (shared mode), for the audit
//   usage.refused    { records, tokens, costMicros, reasons: {reason: n}, reporter?, ts }
//                    records of one request not booked because no real model
//                    could have made them (PLAUSIBLE) or their session is not
//                    one the hooks have seen (shared mode): counted, never added
//   prices.set       { model, price: {input, output, cacheRead, cacheWrite} | null, by, ts }
//                    the project's own price for a model (USD per million
//                    tokens; null removes it): it prices the records booked
//                    after it, before the vendor's figure and the table
//   budget.set       { scope?, target?, period?, unit?, limit?, tz?, limitMicros?, by, ts }
//                    a budget (see src/core/usage/budgets.ts); without `scope` the
//                    project's total in USD (`limitMicros`); 0 removes it
//   budget.crossed   { budget?, threshold: 80|100, version, day?, spent?, limit?,
//                    costMicros?, limitMicros?, ts }
//                    the durable notification: written once per threshold of
//                    each budget version (and day, for a day budget: the
//                    server's idempotency key); without `budget` the project's
//   budget.paused    { budget, version, day?, reason, ts }
//                    the budget is spent: its agents' tool calls are denied
//   budget.lifted    { budget, by, why: 'lifted'|'raised'|'removed', ts }
//                    an owner ended the pause (a raise ends it as well)
//
// Money is integer micro-dollars (1 USD = 1,000,000): sums are exact, so the
// roll-up is the same in any order and after any split of the log.
//
// Invariants:
// - an agent's own tally counts only its own requests; a session's tally is
//   its own plus its helpers'; team and project tallies are the sums of their
//   sessions; per-model and per-day tallies sum to the project's;
// - hostile input (wrong types, negative or huge numbers, long strings) is
//   clamped or ignored; nothing here throws;
// - a model is named by `modelName` (one pure rule: case, a `[1m]`-style
//   suffix, a `models/` prefix), so one model is one row whatever its source;
// - the fold keeps at most LIMITS.agents agents, LIMITS.models models and
//   LIMITS.days days (the oldest day is dropped from the breakdown, never
//   from the totals), so state stays bounded whatever is sent.

//
// This module composes the fold from its parts, one job each, in src/core/usage/:
//   model.ts          USAGE_LIMITS, the state's shape, effects, emptyUsage
//   read.ts           readers for hostile fields (text, counts, days)
//   tally.ts          adding a record's figures into a tally; a tally's tokens
//   records.ts        a `usage` record booked into the roll-ups; a session's helpers
//   refused.ts        what a real model can spend (PLAUSIBLE); `usage.refused`
//   pricing.ts        one name per model, the price table, the project's prices, a request's cost
//   days.ts           calendar days in a time zone
//   budgets.ts        budgets set, counted by day, crossed, paused, lifted
//   budget-views.ts   what a budget means now: spent, crossings due, paused, its words, the inbox's notices
//   snapshots.ts      the state as JSON and back
// Each part names its handlers in a table (`BUDGET_STEPS`, ...); `applyUsage`
// below dispatches on the event's type. Importers use this module only.

import type { UsageEffect, UsageState, UsageStep } from './usage/model.js';
import { RECORD_STEPS } from './usage/records.js';
import { REFUSED_STEPS } from './usage/refused.js';
import { PRICE_STEPS } from './usage/pricing.js';
import { BUDGET_STEPS } from './usage/budgets.js';
export type { Price } from './prices.js';
export { USAGE_PROTOCOL_VERSION, USAGE_LIMITS, type Refused, emptyRefused, REFUSED_REASONS, type Tally, type AgentUsage, type BudgetScope, type BudgetPeriod, type BudgetUnit, type Budget, type UsageState, type UsageEffect, emptyTally, emptyUsage } from './usage/model.js';
export { PLAUSIBLE, implausibleRecord } from './usage/refused.js';
export { tokensOf } from './usage/tally.js';
export { helpersOf } from './usage/records.js';
export { modelName, PRICE_TABLE_DATE, PRICES, priceFrom, priceOf, costOf, costLabel, formatUsd } from './usage/pricing.js';
export { dayIn, validTimeZone } from './usage/days.js';
export { BUDGET_PAUSED, PROJECT_BUDGET, budgetKey } from './usage/budgets.js';
export { budgetSpent, dueCrossings, dueBudgetNotices, isPaused, budgetPausedNow, pausedFor, budgetAmount, budgetLabel, budgetReason, type BudgetNotice, budgetNotices } from './usage/budget-views.js';
export { type UsageJSON, usageToJSON, usageFromJSON } from './usage/snapshots.js';

// ---------------------------------------------------------------- the fold

/** Folds one event; returns its effects. Unknown or malformed events fold to nothing. */
export function applyUsage(s: UsageState, e: unknown): UsageEffect[] {
  if (!e || typeof e !== 'object' || Array.isArray(e)) return [];
  const o = e as Record<string, unknown>;
  const f = typeof o.type === 'string' ? STEPS.get(o.type) : undefined;
  return f ? f(s, o) : [];
}

/**
 * Every event type's handler, composed from the parts' tables (one job each,
 * src/core/usage/*). A Map: an event's `type` is the caller's, so a type such
 * as `constructor` or `__proto__` must find nothing rather than a prototype's
 * member. Composing checks that no two parts claim one type.
 */
const STEPS: ReadonlyMap<string, UsageStep> = compose([RECORD_STEPS, REFUSED_STEPS, PRICE_STEPS, BUDGET_STEPS]);

function compose(tables: readonly Readonly<Record<string, UsageStep>>[]): Map<string, UsageStep> {
  const out = new Map<string, UsageStep>();
  for (const t of tables)
    for (const [type, f] of Object.entries(t)) {
      if (out.has(type)) throw new Error(`two handlers for ${type}`);
      out.set(type, f);
    }
  return out;
}
