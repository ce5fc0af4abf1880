// The usage fold: tokens and cost, rolled up per agent → subagent → session →
// team → project, per model and per day, and the project's budgets (see
// "Budgets" below).
//
// Pure and shared (server and browser fold the same events): imports only the
// price table's data (./prices.ts), no clock, no I/O. Time arrives on the event (`day`, `ts`).
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
//                    a budget (see "Budgets" below); without `scope` the
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

import { PRICE_TABLE, type Price } from './prices.js';

export type { Price };

/** History: 1 — usage, budgets; 2 — models named by `modelName`, `usage.refused`, `prices.set`; 3 — budgets per scope, period and unit (`budgets`, `budget.paused`, `budget.lifted`). */
export const USAGE_PROTOCOL_VERSION = 3;

export const USAGE_LIMITS = {
  id: 160,
  agent: 128,
  team: 80,
  model: 120,
  source: 40,
  /** One event's tokens: at most a billion of each (a request is far below). */
  tokens: 1_000_000_000,
  /** One event's cost: at most $100,000. */
  costMicros: 100_000_000_000,
  agents: 20_000,
  models: 200,
  days: 400,
  /** A budget: at most $10,000,000. */
  budgetMicros: 10_000_000_000_000,
  /** A token budget: at most 100 billion tokens. */
  budgetTokens: 100_000_000_000,
  /** Budgets one project may have (project, teams, agents, each total or per day). */
  budgets: 50,
  /** A time zone's name (IANA, e.g. Europe/Paris). */
  tz: 64,
} as const;

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

/** Records refused as implausible (never booked), for the Cost page. */
export interface Refused {
  records: number;
  /** The tokens and cost they claimed (capped per record as usage is). */
  tokens: number;
  costMicros: number;
  /** How many per reason (REFUSED_REASONS; anything else as `other`). */
  reasons: Record<string, number>;
  lastAt: number;
}

export function emptyRefused(): Refused {
  return { records: 0, tokens: 0, costMicros: 0, reasons: Object.create(null) as Record<string, number>, lastAt: 0 };
}

/** The reasons a `usage.refused` event may give (any other is counted as `other`). */
export const REFUSED_REASONS = ['tokens per record', 'cost per record', 'unknown session', "another person's session", 'session tokens per minute', 'session cost per minute'] as const;

export interface Tally {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  costMicros: number;
  /** Model requests counted. */
  requests: number;
  /** Of those requests' tokens, how many had no known price (their cost is not in costMicros). */
  unpricedTokens: number;
  /** Tool calls the agent's tool accepted or rejected (from the vendors' tool-decision records). */
  accepted: number;
  rejected: number;
}

export interface AgentUsage {
  id: string;
  parent: string | null;
  session: string;
  team: string;
  /** Its own requests only. */
  own: Tally;
  models: Map<string, Tally>;
}

export type BudgetScope = 'project' | 'team' | 'agent';
export type BudgetPeriod = 'total' | 'day';
export type BudgetUnit = 'usd' | 'tokens';

export interface Budget {
  /** `<scope>:<target>:<period>` (budgetKey): one budget per scope, target and period. */
  key: string;
  scope: BudgetScope;
  /** The team's name or the session agent's id ('' for the project). */
  target: string;
  period: BudgetPeriod;
  unit: BudgetUnit;
  /** In the unit: micro-dollars or tokens. */
  limit: number;
  /** The legacy figure: the limit in micro-dollars (0 for a token budget). */
  limitMicros: number;
  /** A day budget's time zone (IANA name; 'UTC' by default). */
  tz: string;
  /** Counts budget.set events of this key: a new version re-arms its notifications. */
  version: number;
  setBy: string;
  /** When this version was set (its event's ts): with the version, it names the version uniquely, even after a removal. */
  setAt: number;
  /** Thresholds (80, 100) already notified for this version (and day). */
  notified: number[];
  /** A day budget: the day its spend is of (YYYY-MM-DD in `tz`), '' before any. */
  day: string;
  /** A day budget: what its scope spent that day since the budget was set. */
  dayMicros: number;
  dayTokens: number;
  /** Paused (budget.paused) for this version and day, with the reason its agents were given, or null. */
  paused: { version: number; day: string; at: number; reason?: string } | null;
  /** The last threshold crossed (budget.crossed) for this version and day, and when: what the inbox shows (budgetNotices). */
  crossed: { threshold: 80 | 100; at: number } | null;
  /** `<version>:<day>` an owner lifted (budget.lifted): a pause of that version and day written after it does not hold. */
  lifted: string;
}

export interface UsageState {
  agents: Map<string, AgentUsage>;
  /** Session totals (the session's own requests and its helpers'). */
  sessions: Map<string, Tally>;
  teams: Map<string, Tally>;
  models: Map<string, Tally>;
  days: Map<string, Tally>;
  project: Tally;
  /** The project's total budget in USD (the same object as `budgets`' `project::total`), or null. */
  budget: Budget | null;
  /** Every budget of the project, by key (at most USAGE_LIMITS.budgets). */
  budgets: Map<string, Budget>;
  /** The project's own prices (prices.set), by normalised model name. */
  prices: Map<string, { price: Price; by: string; at: number }>;
  /** Records refused as implausible (usage.refused). */
  refused: Refused;
  /** The events folded (not positions: the server keeps those). */
  count: number;
}

export type UsageEffect = { kind: 'usage'; agent: string; session: string } | { kind: 'budget'; budget: string; threshold: number; costMicros: number; limitMicros: number };

export function emptyTally(): Tally {
  return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, costMicros: 0, requests: 0, unpricedTokens: 0, accepted: 0, rejected: 0 };
}

export function emptyUsage(): UsageState {
  return { agents: new Map(), sessions: new Map(), teams: new Map(), models: new Map(), days: new Map(), project: emptyTally(), budget: null, budgets: new Map(), prices: new Map(), refused: emptyRefused(), count: 0 };
}

function str(v: unknown, max: number): string {
  return typeof v === 'string' ? v.slice(0, max) : '';
}

/** A count: a finite number, floored, within [0, cap]; anything else is 0. */
function count(v: unknown, cap: number): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) return 0;
  return Math.min(Math.floor(v), cap);
}

function add(t: Tally, d: Tally): void {
  t.input += d.input;
  t.output += d.output;
  t.cacheRead += d.cacheRead;
  t.cacheWrite += d.cacheWrite;
  t.costMicros += d.costMicros;
  t.requests += d.requests;
  t.unpricedTokens += d.unpricedTokens;
  t.accepted += d.accepted;
  t.rejected += d.rejected;
}

function into<K>(m: Map<K, Tally>, k: K, d: Tally): void {
  let t = m.get(k);
  if (!t) m.set(k, (t = emptyTally()));
  add(t, d);
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** Folds one event; returns its effects. Unknown or malformed events fold to nothing. */
export function applyUsage(s: UsageState, e: unknown): UsageEffect[] {
  if (!e || typeof e !== 'object' || Array.isArray(e)) return [];
  const o = e as Record<string, unknown>;
  switch (o.type) {
    case 'usage':
      return applyReport(s, o);
    case 'prices.set': {
      const model = modelName(o.model);
      if (!model) return [];
      s.count++;
      const price = priceFrom(o.price);
      if (price) {
        s.prices.delete(model);
        s.prices.set(model, { price, by: str(o.by, 120), at: count(o.ts, Number.MAX_SAFE_INTEGER) });
        // At most USAGE_LIMITS.models rows: the oldest set goes first.
        if (s.prices.size > USAGE_LIMITS.models) s.prices.delete(s.prices.keys().next().value as string);
      } else s.prices.delete(model);
      return [];
    }
    case 'usage.refused': {
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
    case 'budget.set':
      return applyBudgetSet(s, o);
    case 'budget.crossed': {
      const b = s.budgets.get(typeof o.budget === 'string' ? o.budget : PROJECT_BUDGET);
      const th = o.threshold;
      if (!b || (th !== 80 && th !== 100) || o.version !== b.version || b.notified.includes(th)) return [];
      if (b.period === 'day' && o.day !== b.day) return [];
      s.count++;
      b.notified.push(th);
      // 100 implies 80 (a budget passed at once is one crossing).
      if (th === 100 && !b.notified.includes(80)) b.notified.push(80);
      b.notified.sort((x, y) => x - y);
      b.crossed = { threshold: th, at: count(o.ts, Number.MAX_SAFE_INTEGER) };
      return [{ kind: 'budget', budget: b.key, threshold: th, costMicros: count(o.costMicros ?? o.spent, Number.MAX_SAFE_INTEGER), limitMicros: b.limitMicros }];
    }
    case 'budget.paused': {
      const b = s.budgets.get(str(o.budget, BUDGET_KEY_MAX));
      if (!b || o.version !== b.version || (b.period === 'day' && o.day !== b.day) || b.lifted === `${b.version}:${b.day}`) return [];
      s.count++;
      b.paused = { version: b.version, day: b.day, at: count(o.ts, Number.MAX_SAFE_INTEGER), reason: str(o.reason, BUDGET_REASON_MAX) };
      return [];
    }
    case 'budget.lifted': {
      const b = s.budgets.get(str(o.budget, BUDGET_KEY_MAX));
      if (!b) return [];
      s.count++;
      b.paused = null;
      // Also when its pause is not folded yet (another node writes it): that pause, when it comes, does not hold.
      b.lifted = `${b.version}:${b.day}`;
      // Lifted without a raise: the 100% of this version (and day) stays notified, so it does not pause again.
      if (!b.notified.includes(100)) b.notified.push(100);
      return [];
    }
    default:
      return [];
  }
}

function applyReport(s: UsageState, o: Record<string, unknown>): UsageEffect[] {
  const agent = str(o.agent, USAGE_LIMITS.agent);
  if (!agent) return [];
  const session = str(o.session, USAGE_LIMITS.agent) || agent;
  const parentRaw = str(o.parent, USAGE_LIMITS.agent);
  const parent = parentRaw && parentRaw !== agent ? parentRaw : null;
  const team = str(o.team, USAGE_LIMITS.team) || 'default';
  // '' for records that are not model requests (tool decisions): no model row.
  const model = modelName(o.model);
  const dayRaw = str(o.day, 10);
  const day = DAY.test(dayRaw) ? dayRaw : 'unknown';
  const d: Tally = {
    input: count(o.input, USAGE_LIMITS.tokens),
    output: count(o.output, USAGE_LIMITS.tokens),
    cacheRead: count(o.cacheRead, USAGE_LIMITS.tokens),
    cacheWrite: count(o.cacheWrite, USAGE_LIMITS.tokens),
    costMicros: count(o.costMicros, USAGE_LIMITS.costMicros),
    requests: o.requests === undefined ? 1 : count(o.requests, 1_000_000),
    unpricedTokens: 0,
    accepted: count(o.accepted, 1_000_000),
    rejected: count(o.rejected, 1_000_000),
  };
  if (o.costFrom === 'unknown') d.unpricedTokens = d.input + d.output + d.cacheRead + d.cacheWrite;

  let a = s.agents.get(agent);
  if (!a) {
    if (s.agents.size >= USAGE_LIMITS.agents) return [];
    a = { id: agent, parent, session, team, own: emptyTally(), models: new Map() };
    s.agents.set(agent, a);
  }
  // An agent keeps the session, parent and team it was first seen with: the
  // roll-up of a helper never moves to another session.
  s.count++;
  add(a.own, d);
  if (model && (a.models.has(model) || a.models.size < USAGE_LIMITS.models)) into(a.models, model, d);
  into(s.sessions, a.session, d);
  into(s.teams, a.team, d);
  if (model && (s.models.has(model) || s.models.size < USAGE_LIMITS.models)) into(s.models, model, d);
  into(s.days, day, d);
  if (s.days.size > USAGE_LIMITS.days) {
    // Drop the oldest day from the breakdown (ISO dates sort as strings).
    let oldest: string | null = null;
    for (const k of s.days.keys()) if (oldest === null || k < oldest) oldest = k;
    if (oldest !== null) s.days.delete(oldest);
  }
  add(s.project, d);
  if (s.budgets.size) countForDayBudgets(s, a, d, count(o.ts, Number.MAX_SAFE_INTEGER), day);
  return [{ kind: 'usage', agent: a.id, session: a.session }];
}

// ---------------------------------------------------------------- budgets
//
// One mechanism for every budget: a scope (the project, a team, or an agent:
// a session with its helpers), a period (in total, or per day in a time zone,
// UTC unless the owner names one) and a unit (USD or tokens). A total budget
// reads the fold's own tallies (project, team, session); a day budget counts
// what its scope books on its day from when it is set (the fold keeps no
// per-team history by day), and starts again at the first record of the
// next day. Crossing 80% is a notice; 100% a notice and a pause, both
// written by the server once (its idempotency key); the pause lasts until an
// owner lifts it or raises the limit, or, for a day budget, until the day ends.

/** How a paused agent's activity starts on the floor (the hooks write it; the agent card shows it as paused). */
export const BUDGET_PAUSED = 'Paused: ';

/** The legacy budget's key: the project's total (budget.set without a scope). */
export const PROJECT_BUDGET = 'project::total';
const BUDGET_KEY_MAX = 12 + USAGE_LIMITS.agent;
/** A pause's reason as folded (the server writes budgetReason's few dozen characters). */
const BUDGET_REASON_MAX = 400;

export function budgetKey(scope: BudgetScope, target: string, period: BudgetPeriod): string {
  return `${scope}:${scope === 'project' ? '' : target}:${period}`;
}

function newBudget(scope: BudgetScope, target: string, period: BudgetPeriod, unit: BudgetUnit, limit: number, tz: string): Budget {
  return { key: budgetKey(scope, target, period), scope, target: scope === 'project' ? '' : target, period, unit, limit, limitMicros: unit === 'usd' ? limit : 0, tz, version: 1, setBy: '', setAt: 0, notified: [], day: '', dayMicros: 0, dayTokens: 0, paused: null, lifted: '', crossed: null };
}

function projectBudgetOf(s: UsageState): Budget | null {
  const b = s.budgets.get(PROJECT_BUDGET);
  return b && b.unit === 'usd' ? b : null;
}

const dayFormats = new Map<string, Intl.DateTimeFormat | null>();

/** The calendar day (YYYY-MM-DD) of `ts` in time zone `tz` (an unknown zone reads as UTC). */
export function dayIn(ts: number, tz: string): string {
  if (!Number.isFinite(ts) || ts <= 0) return '';
  if (tz !== 'UTC') {
    let f = dayFormats.get(tz);
    if (f === undefined) {
      try {
        f = new Intl.DateTimeFormat('en-CA', { timeZone: tz, year: 'numeric', month: '2-digit', day: '2-digit' });
      } catch {
        f = null;
      }
      if (dayFormats.size < 1000) dayFormats.set(tz, f);
    }
    if (f) {
      const p = f.formatToParts(ts);
      const part = (t: string) => p.find((x) => x.type === t)?.value ?? '';
      return `${part('year')}-${part('month')}-${part('day')}`;
    }
  }
  return new Date(ts).toISOString().slice(0, 10);
}

/** Whether a time zone name is one the runtime knows. */
export function validTimeZone(tz: string): boolean {
  if (tz === 'UTC') return true;
  try {
    new Intl.DateTimeFormat('en-CA', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

function applyBudgetSet(s: UsageState, o: Record<string, unknown>): UsageEffect[] {
  const legacy = o.scope === undefined;
  const scope: BudgetScope | null = legacy ? 'project' : o.scope === 'project' || o.scope === 'team' || o.scope === 'agent' ? o.scope : null;
  if (!scope) return [];
  const target = scope === 'project' ? '' : str(o.target, scope === 'team' ? USAGE_LIMITS.team : USAGE_LIMITS.agent);
  if (scope !== 'project' && !target) return [];
  const period: BudgetPeriod = o.period === 'day' ? 'day' : 'total';
  const unit: BudgetUnit = o.unit === 'tokens' ? 'tokens' : 'usd';
  const limit = legacy ? count(o.limitMicros, USAGE_LIMITS.budgetMicros) : count(o.limit, unit === 'usd' ? USAGE_LIMITS.budgetMicros : USAGE_LIMITS.budgetTokens);
  const tz = period === 'day' ? str(o.tz, USAGE_LIMITS.tz) || 'UTC' : 'UTC';
  const key = budgetKey(scope, target, period);
  const old = s.budgets.get(key);
  if (limit === 0) {
    if (!old) return [];
    s.count++;
    s.budgets.delete(key);
    s.budget = projectBudgetOf(s);
    return [];
  }
  if (!old && s.budgets.size >= USAGE_LIMITS.budgets) return [];
  s.count++;
  const b = newBudget(scope, target, period, unit, limit, tz);
  b.setBy = str(o.by, 120);
  b.setAt = count(o.ts, Number.MAX_SAFE_INTEGER);
  if (old) {
    b.version = old.version + 1;
    // A raise keeps what the day has spent so far (same unit and zone): only the limit moves.
    if (old.unit === unit && old.tz === tz) ((b.day = old.day), (b.dayMicros = old.dayMicros), (b.dayTokens = old.dayTokens));
    s.budgets.delete(key);
  }
  if (b.period === 'day') {
    const today = dayIn(count(o.ts, Number.MAX_SAFE_INTEGER), tz);
    if (today > b.day) ((b.day = today), (b.dayMicros = 0), (b.dayTokens = 0));
  }
  s.budgets.set(key, b);
  s.budget = projectBudgetOf(s);
  return [];
}

function covers(b: Budget, session: string, team: string): boolean {
  return b.scope === 'project' || (b.scope === 'team' ? b.target === team : b.target === session);
}

/** A usage record counts for the day budgets its agent falls under (at most USAGE_LIMITS.budgets). */
function countForDayBudgets(s: UsageState, a: AgentUsage, d: Tally, ts: number, utcDay: string): void {
  for (const b of s.budgets.values()) {
    if (b.period !== 'day' || !covers(b, a.session, a.team)) continue;
    const day = ts > 0 ? dayIn(ts, b.tz) : b.tz === 'UTC' && utcDay !== 'unknown' ? utcDay : '';
    if (!day || day < b.day) continue;
    if (day > b.day) ((b.day = day), (b.dayMicros = 0), (b.dayTokens = 0), (b.notified = []), (b.paused = null), (b.lifted = ''), (b.crossed = null));
    b.dayMicros += d.costMicros;
    b.dayTokens += tokensOf(d);
  }
}

/** What a budget's scope spent in its unit (a day budget: on its day; with `now`, 0 when that day is over). */
export function budgetSpent(s: UsageState, b: Budget, now?: number): number {
  if (b.period === 'day') {
    if (now !== undefined && dayIn(now, b.tz) !== b.day) return 0;
    return b.unit === 'usd' ? b.dayMicros : b.dayTokens;
  }
  const t = b.scope === 'project' ? s.project : b.scope === 'team' ? s.teams.get(b.target) : s.sessions.get(b.target);
  if (!t) return 0;
  return b.unit === 'usd' ? t.costMicros : tokensOf(t);
}

/** The thresholds budgets have reached and not yet been notified of (the server writes budget.crossed, and budget.paused at 100). */
export function dueCrossings(s: UsageState): { budget: Budget; threshold: 80 | 100; spent: number }[] {
  const out: { budget: Budget; threshold: 80 | 100; spent: number }[] = [];
  for (const b of s.budgets.values()) {
    if (b.period === 'day' && !b.day) continue;
    const spent = budgetSpent(s, b);
    // spent ≥ th% of the limit, in integers: spent·100 ≥ limit·th.
    for (const th of [80, 100] as const) if (!b.notified.includes(th) && spent * 100 >= b.limit * th) out.push({ budget: b, threshold: th, spent });
  }
  return out;
}

/** The project budget's thresholds reached and not yet notified (the legacy view of dueCrossings). */
export function dueBudgetNotices(s: UsageState): number[] {
  return dueCrossings(s)
    .filter((c) => c.budget.key === PROJECT_BUDGET && c.budget.unit === 'usd')
    .map((c) => c.threshold);
}

/** Whether a budget is paused now (its pause is of its version and, for a day budget, of today in its zone). */
export function isPaused(b: Budget, now: number): boolean {
  return b.paused !== null && b.paused.version === b.version && (b.period !== 'day' || b.paused.day === dayIn(now, b.tz));
}

/** Whether a budget pauses its agents now: its pause is written, or it is spent and the pause is on its way (100% not yet notified for this version and day). */
export function budgetPausedNow(s: UsageState, b: Budget, now: number): boolean {
  if (isPaused(b, now)) return true;
  return !b.notified.includes(100) && (b.period !== 'day' || b.day === dayIn(now, b.tz)) && budgetSpent(s, b) >= b.limit;
}

/**
 * The paused budget that covers an agent (its session, any of its teams), or
 * null: what the hooks, the bridge and the flock ask before the next step
 * (a spent budget whose budget.paused is still being written counts).
 * At most USAGE_LIMITS.budgets budgets are looked at.
 */
export function pausedFor(s: UsageState, who: { session?: string; teams?: readonly string[] }, now: number): Budget | null {
  for (const b of s.budgets.values()) {
    if (!budgetPausedNow(s, b, now)) continue;
    if (b.scope === 'project' || (b.scope === 'team' ? (who.teams ?? []).includes(b.target) : who.session === b.target)) return b;
  }
  return null;
}

/** '25.00 $' or '1,200,000 tokens'. */
export function budgetAmount(unit: BudgetUnit, n: number): string {
  return unit === 'usd' ? `${(n / 1_000_000).toFixed(2)} $` : `${String(Math.floor(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',')} tokens`;
}

/** Who a budget is for, as a person reads it: `team backend`, `agent claude-code:…`, `project default`. */
export function budgetLabel(b: Budget, project: string): string {
  return b.scope === 'project' ? `project ${project}` : b.scope === 'team' ? `team ${b.target}` : `agent ${b.target} (with its sub-agents)`;
}

/** The reason the model reads: "budget for team X reached: 25.00 $ of 25.00 $ today". */
export function budgetReason(s: UsageState, b: Budget, project: string, now?: number): string {
  const when = b.period === 'day' ? ` today${b.tz !== 'UTC' ? ` (${b.tz})` : ''}` : '';
  return `budget for ${budgetLabel(b, project)} reached: ${budgetAmount(b.unit, budgetSpent(s, b, now))} of ${budgetAmount(b.unit, b.limit)}${when}`;
}

/** A budget's crossing as the inbox lists it (one per budget: its last threshold of this version and day). */
export interface BudgetNotice {
  /** Names the crossing (`<key>:<version>:<day>:<threshold>`): what a person dismisses. */
  id: string;
  budget: Budget;
  /** Who the budget is for, as budgetLabel says it. */
  label: string;
  threshold: 80 | 100;
  at: number;
  /** Paused now: the reason its agents are given (budget.paused), else null (80%, or a lifted pause). */
  paused: string | null;
}

/**
 * The budgets whose last crossing still stands, newest first: crossed for
 * their current version (a raise or a new limit re-arms them and drops the
 * notice) and, for a day budget, on its day in its zone now. At most
 * USAGE_LIMITS.budgets.
 */
export function budgetNotices(s: UsageState, project: string, now: number): BudgetNotice[] {
  const out: BudgetNotice[] = [];
  for (const b of s.budgets.values()) {
    const c = b.crossed;
    if (!c || (b.period === 'day' && b.day !== dayIn(now, b.tz))) continue;
    const paused = isPaused(b, now) ? b.paused?.reason || budgetReason(s, b, project, now) : null;
    out.push({ id: `${b.key}:${b.version}:${b.day}:${c.threshold}`, budget: b, label: budgetLabel(b, project), threshold: c.threshold, at: c.at, paused });
  }
  return out.sort((x, y) => y.at - x.at);
}

function budgetFromJSON(v: unknown): Budget | null {
  if (!v || typeof v !== 'object') return null;
  const o = v as Record<string, unknown>;
  const scope = o.scope === 'project' || o.scope === 'team' || o.scope === 'agent' ? o.scope : null;
  if (!scope) return null;
  const unit: BudgetUnit = o.unit === 'tokens' ? 'tokens' : 'usd';
  const limit = count(o.limit, unit === 'usd' ? USAGE_LIMITS.budgetMicros : USAGE_LIMITS.budgetTokens);
  if (!limit) return null;
  const b = newBudget(scope, str(o.target, USAGE_LIMITS.agent), o.period === 'day' ? 'day' : 'total', unit, limit, str(o.tz, USAGE_LIMITS.tz) || 'UTC');
  b.version = count(o.version, Number.MAX_SAFE_INTEGER);
  b.setBy = str(o.setBy, 120);
  b.setAt = count(o.setAt, Number.MAX_SAFE_INTEGER);
  b.notified = Array.isArray(o.notified) ? o.notified.filter((x): x is number => x === 80 || x === 100) : [];
  b.day = DAY.test(str(o.day, 10)) ? str(o.day, 10) : '';
  b.dayMicros = count(o.dayMicros, Number.MAX_SAFE_INTEGER);
  b.dayTokens = count(o.dayTokens, Number.MAX_SAFE_INTEGER);
  const p = o.paused as Record<string, unknown> | null;
  b.paused = p && typeof p === 'object' ? { version: count(p.version, Number.MAX_SAFE_INTEGER), day: str(p.day, 10), at: count(p.at, Number.MAX_SAFE_INTEGER), reason: str(p.reason, BUDGET_REASON_MAX) } : null;
  const c = o.crossed as Record<string, unknown> | null;
  b.crossed = c && typeof c === 'object' && (c.threshold === 80 || c.threshold === 100) ? { threshold: c.threshold, at: count(c.at, Number.MAX_SAFE_INTEGER) } : null;
  b.lifted = str(o.lifted, 40);
  return b;
}

/** A session's helpers (agents whose session it is, other than itself). */
export function helpersOf(s: UsageState, session: string): AgentUsage[] {
  const out: AgentUsage[] = [];
  for (const a of s.agents.values()) if (a.session === session && a.id !== session) out.push(a);
  return out;
}

// ---------------------------------------------------------------- JSON

function tallyOf(v: unknown): Tally {
  const o = v && typeof v === 'object' ? (v as Record<string, unknown>) : {};
  const t = emptyTally();
  for (const k of Object.keys(t) as (keyof Tally)[]) t[k] = count(o[k], Number.MAX_SAFE_INTEGER);
  return t;
}

export interface UsageJSON {
  agents: { id: string; parent: string | null; session: string; team: string; own: Tally; models: [string, Tally][] }[];
  sessions: [string, Tally][];
  teams: [string, Tally][];
  models: [string, Tally][];
  days: [string, Tally][];
  project: Tally;
  budget: Budget | null;
  budgets?: Budget[];
  prices?: [string, { price: Price; by: string; at: number }][];
  refused?: Refused;
  count: number;
}

export function usageToJSON(s: UsageState): UsageJSON {
  return {
    agents: [...s.agents.values()].map((a) => ({ id: a.id, parent: a.parent, session: a.session, team: a.team, own: a.own, models: [...a.models] })),
    sessions: [...s.sessions],
    teams: [...s.teams],
    models: [...s.models],
    days: [...s.days].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0)),
    project: s.project,
    budget: s.budget,
    budgets: [...s.budgets.values()],
    prices: [...s.prices],
    refused: s.refused,
    count: s.count,
  };
}

/** A snapshot back into a state (a browser's starting point); malformed parts are dropped. */
export function usageFromJSON(j: unknown): UsageState {
  const s = emptyUsage();
  const o = j && typeof j === 'object' ? (j as Record<string, unknown>) : {};
  const pairs = (v: unknown): [string, Tally][] => (Array.isArray(v) ? v.filter((p) => Array.isArray(p) && typeof p[0] === 'string').map((p) => [p[0] as string, tallyOf(p[1])]) : []);
  for (const a of Array.isArray(o.agents) ? o.agents : []) {
    if (!a || typeof a !== 'object' || typeof a.id !== 'string') continue;
    s.agents.set(a.id, { id: a.id, parent: typeof a.parent === 'string' ? a.parent : null, session: str(a.session, USAGE_LIMITS.agent) || a.id, team: str(a.team, USAGE_LIMITS.team), own: tallyOf(a.own), models: new Map(pairs(a.models)) });
  }
  s.sessions = new Map(pairs(o.sessions));
  s.teams = new Map(pairs(o.teams));
  s.models = new Map(pairs(o.models));
  s.days = new Map(pairs(o.days));
  s.project = tallyOf(o.project);
  for (const v of Array.isArray(o.budgets) ? o.budgets.slice(0, USAGE_LIMITS.budgets) : []) {
    const b = budgetFromJSON(v);
    if (b) s.budgets.set(b.key, b);
  }
  const legacy = o.budget as Record<string, unknown> | null;
  if (!s.budgets.size && legacy && typeof legacy === 'object' && count(legacy.limitMicros, USAGE_LIMITS.budgetMicros) > 0) {
    const b = newBudget('project', '', 'total', 'usd', count(legacy.limitMicros, USAGE_LIMITS.budgetMicros), 'UTC');
    b.version = count(legacy.version, Number.MAX_SAFE_INTEGER);
    b.setBy = str(legacy.setBy, 120);
    b.notified = Array.isArray(legacy.notified) ? legacy.notified.filter((x): x is number => x === 80 || x === 100) : [];
    s.budgets.set(b.key, b);
  }
  s.budget = projectBudgetOf(s);
  for (const p of Array.isArray(o.prices) ? o.prices.slice(0, USAGE_LIMITS.models) : []) {
    if (!Array.isArray(p) || typeof p[0] !== 'string' || !p[1] || typeof p[1] !== 'object') continue;
    const price = priceFrom((p[1] as Record<string, unknown>).price);
    if (price) s.prices.set(p[0], { price, by: str((p[1] as Record<string, unknown>).by, 120), at: count((p[1] as Record<string, unknown>).at, Number.MAX_SAFE_INTEGER) });
  }
  const rf = o.refused && typeof o.refused === 'object' ? (o.refused as Record<string, unknown>) : null;
  if (rf) {
    s.refused.records = count(rf.records, Number.MAX_SAFE_INTEGER);
    s.refused.tokens = count(rf.tokens, Number.MAX_SAFE_INTEGER);
    s.refused.costMicros = count(rf.costMicros, Number.MAX_SAFE_INTEGER);
    s.refused.lastAt = count(rf.lastAt, Number.MAX_SAFE_INTEGER);
    const reasons = rf.reasons && typeof rf.reasons === 'object' ? (rf.reasons as Record<string, unknown>) : {};
    for (const k of Object.keys(reasons).slice(0, 10)) if ((REFUSED_REASONS as readonly string[]).includes(k) || k === 'other') s.refused.reasons[k] = count(reasons[k], Number.MAX_SAFE_INTEGER);
  }
  s.count = count(o.count, Number.MAX_SAFE_INTEGER);
  return s;
}

// ---------------------------------------------------------------- prices

/**
 * One model's one name, whatever reported it: trimmed, lower case, without
 * Claude Code's context-size suffix (`claude-opus-4-8[1m]`) or the Gemini
 * API's `models/` prefix, at most USAGE_LIMITS.model characters; '' for
 * anything that is not a name. The fold names every row with it, so the
 * per-model breakdown lists a model once.
 */
export function modelName(v: unknown): string {
  if (typeof v !== 'string') return '';
  return v
    .slice(0, USAGE_LIMITS.model * 2)
    .trim()
    .toLowerCase()
    .replace(/^models\//, '')
    .replace(/(\s*\[[^\]]*\])+$/, '')
    .trim()
    .slice(0, USAGE_LIMITS.model);
}

/** The date of the price table in the repo (src/core/prices.ts). */
export const PRICE_TABLE_DATE = PRICE_TABLE.date;

/** The table's rows, longest prefix first is not needed: `priceOf` picks the longest match. */
export const PRICES: readonly (readonly [string, Price])[] = Object.entries(PRICE_TABLE.rows);

/** A price row (each figure a finite USD per million tokens in [0, 10,000]), or null. */
export function priceFrom(v: unknown): Price | null {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return null;
  const o = v as Record<string, unknown>;
  const out: Price = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
  for (const k of ['input', 'output', 'cacheRead', 'cacheWrite'] as const) {
    const n = o[k];
    if (typeof n !== 'number' || !Number.isFinite(n) || n < 0 || n > 10_000) return null;
    out[k] = n;
  }
  return out;
}

/** Longest prefix of `model` among `rows`' keys. */
function longest<V>(model: string, rows: Iterable<readonly [string, V]>): V | null {
  let best: V | null = null;
  let len = -1;
  for (const [prefix, p] of rows) if (model.startsWith(prefix) && prefix.length > len) ((best = p), (len = prefix.length));
  return best;
}

/** The table's row for a model (its normalised name's longest matching prefix), or null. */
export function priceOf(model: string): Price | null {
  return longest(modelName(model), PRICES);
}

/**
 * The cost of one request in micro-dollars, and where it came from: the
 * project's own price when it has one for the model (`project`), else the
 * vendor's own figure when it reported a positive one (`vendor`), else the
 * table's (`table:<date>`), else unknown (0, and the tokens are counted as
 * unpriced). A vendor's 0 for tokens the table prices is not believed (no
 * token with a price is free), and a priced request with tokens costs at
 * least one micro-dollar, so nothing priced shows as $0.
 */
export function costOf(
  model: string,
  t: { input: number; output: number; cacheRead: number; cacheWrite: number },
  vendorUsd?: number,
  project?: ReadonlyMap<string, { price: Price }>,
): { costMicros: number; costFrom: string } {
  const name = modelName(model);
  const tokens = t.input + t.output + t.cacheRead + t.cacheWrite;
  const priced = (p: Price, from: string) => {
    // USD per million tokens × tokens = micro-dollars.
    const c = Math.round(p.input * t.input + p.output * t.output + p.cacheRead * t.cacheRead + p.cacheWrite * t.cacheWrite);
    return { costMicros: tokens > 0 && (p.input || p.output || p.cacheRead || p.cacheWrite) ? Math.max(1, c) : c, costFrom: from };
  };
  const own = project && project.size ? longest(name, [...project].map(([k, v]) => [k, v.price] as const)) : null;
  if (own) return priced(own, 'project');
  const vendor = typeof vendorUsd === 'number' && Number.isFinite(vendorUsd) && vendorUsd >= 0 ? Math.round(vendorUsd * 1_000_000) : null;
  const p = priceOf(name);
  if (vendor !== null && (vendor > 0 || !p || tokens === 0)) return { costMicros: vendor, costFrom: 'vendor' };
  if (!p) return { costMicros: 0, costFrom: 'unknown' };
  return priced(p, `table:${PRICE_TABLE_DATE}`);
}

/**
 * A tally's cost as a person should read it: `unpriced` when none of its
 * tokens had a price (never `$0`), `$1.23 + unpriced` when some had none,
 * else the dollars.
 */
export function costLabel(t: Pick<Tally, 'costMicros' | 'unpricedTokens'>): string {
  if (t.unpricedTokens > 0) return t.costMicros > 0 ? `${formatUsd(t.costMicros)} + unpriced` : 'unpriced';
  return formatUsd(t.costMicros);
}

/** '$1.23' (or '$0.0042' below a cent, '$0' for nothing). */
export function formatUsd(micros: number): string {
  if (!micros) return '$0';
  const usd = micros / 1_000_000;
  return usd >= 0.01 ? `$${usd.toFixed(2)}` : `$${usd.toPrecision(2)}`;
}

/** Total tokens of a tally (input, output and both cache figures). */
export function tokensOf(t: Tally): number {
  return t.input + t.output + t.cacheRead + t.cacheWrite;
}
