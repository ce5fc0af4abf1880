// What a budget's figures mean now: what its scope spent, the crossings due,
// whether it pauses an agent, and the words people and models read (labels,
// reasons, the inbox's notices).

import type { Budget, BudgetUnit, UsageState } from './model.js';
import { PROJECT_BUDGET } from './budgets.js';
import { tokensOf } from './tally.js';
import { dayIn } from './days.js';

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
