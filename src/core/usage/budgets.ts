// Budgets: set, changed or removed (`budget.set`), a record counted for the
// day budgets it falls under, and the durable marks the server writes once:
// a threshold crossed, a pause, a lift.

import { USAGE_LIMITS, type AgentUsage, type Budget, type BudgetPeriod, type BudgetScope, type BudgetUnit, type Tally, type UsageEffect, type UsageState, type UsageStep } from './model.js';
import { count, str } from './read.js';
import { tokensOf } from './tally.js';
import { dayIn } from './days.js';

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
export const BUDGET_KEY_MAX = 12 + USAGE_LIMITS.agent;
/** A pause's reason as folded (the server writes budgetReason's few dozen characters). */
export const BUDGET_REASON_MAX = 400;

export function budgetKey(scope: BudgetScope, target: string, period: BudgetPeriod): string {
  return `${scope}:${scope === 'project' ? '' : target}:${period}`;
}

export function newBudget(scope: BudgetScope, target: string, period: BudgetPeriod, unit: BudgetUnit, limit: number, tz: string): Budget {
  return { key: budgetKey(scope, target, period), scope, target: scope === 'project' ? '' : target, period, unit, limit, limitMicros: unit === 'usd' ? limit : 0, tz, version: 1, setBy: '', setAt: 0, notified: [], day: '', dayMicros: 0, dayTokens: 0, paused: null, lifted: '', crossed: null };
}

export function projectBudgetOf(s: UsageState): Budget | null {
  const b = s.budgets.get(PROJECT_BUDGET);
  return b && b.unit === 'usd' ? b : null;
}

export function applyBudgetSet(s: UsageState, o: Record<string, unknown>): UsageEffect[] {
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

export function covers(b: Budget, session: string, team: string): boolean {
  return b.scope === 'project' || (b.scope === 'team' ? b.target === team : b.target === session);
}

/** A usage record counts for the day budgets its agent falls under (at most USAGE_LIMITS.budgets). */
export function countForDayBudgets(s: UsageState, a: AgentUsage, d: Tally, ts: number, utcDay: string): void {
  for (const b of s.budgets.values()) {
    if (b.period !== 'day' || !covers(b, a.session, a.team)) continue;
    const day = ts > 0 ? dayIn(ts, b.tz) : b.tz === 'UTC' && utcDay !== 'unknown' ? utcDay : '';
    if (!day || day < b.day) continue;
    if (day > b.day) ((b.day = day), (b.dayMicros = 0), (b.dayTokens = 0), (b.notified = []), (b.paused = null), (b.lifted = ''), (b.crossed = null));
    b.dayMicros += d.costMicros;
    b.dayTokens += tokensOf(d);
  }
}

/** A threshold of a budget's version (and day) notified: once. */
function budgetCrossed(s: UsageState, o: Record<string, unknown>): UsageEffect[] {
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

/** A spent budget paused for its version and day (not one an owner already lifted). */
function budgetPaused(s: UsageState, o: Record<string, unknown>): UsageEffect[] {
  const b = s.budgets.get(str(o.budget, BUDGET_KEY_MAX));
  if (!b || o.version !== b.version || (b.period === 'day' && o.day !== b.day) || b.lifted === `${b.version}:${b.day}`) return [];
  s.count++;
  b.paused = { version: b.version, day: b.day, at: count(o.ts, Number.MAX_SAFE_INTEGER), reason: str(o.reason, BUDGET_REASON_MAX) };
  return [];
}

/** An owner ended a pause (or one on its way). */
function budgetLifted(s: UsageState, o: Record<string, unknown>): UsageEffect[] {
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

export const BUDGET_STEPS: Readonly<Record<string, UsageStep>> = {
  'budget.set': applyBudgetSet,
  'budget.crossed': budgetCrossed,
  'budget.paused': budgetPaused,
  'budget.lifted': budgetLifted,
};
