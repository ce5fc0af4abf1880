// The state as JSON and back (`usageToJSON` / `usageFromJSON`): a snapshot
// is a browser's starting point, so every part of it is read as hostile.

import { REFUSED_REASONS, USAGE_LIMITS, emptyTally, emptyUsage, type Budget, type BudgetUnit, type Refused, type Tally, type UsageState } from './model.js';
import type { Price } from '../prices.js';
import { DAY, count, str } from './read.js';
import { BUDGET_REASON_MAX, newBudget, projectBudgetOf } from './budgets.js';
import { priceFrom } from './pricing.js';

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
