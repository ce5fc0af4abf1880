// Usage's caps (USAGE_LIMITS), the state's shape (tallies per agent, session,
// team, model and day; budgets; the project's prices; refused records), its
// effects, and the empty state: what every other part of the fold
// (src/core/usage/*) reads.

import type { Price } from '../prices.js';

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

/** One event type's handler (`o` is the event, an object): what changed, as effects. */
export type UsageStep = (s: UsageState, o: Record<string, unknown>) => UsageEffect[];
