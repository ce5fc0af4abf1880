// Records booked: one model request (or a batch) rolled up into its agent,
// session, team, model and day and the project (bounded by USAGE_LIMITS),
// and counted for the day budgets it falls under; a session's helpers.

import { USAGE_LIMITS, emptyTally, type AgentUsage, type Tally, type UsageEffect, type UsageState, type UsageStep } from './model.js';
import { DAY, count, str } from './read.js';
import { add, into } from './tally.js';
import { modelName } from './pricing.js';
import { countForDayBudgets } from './budgets.js';

/** One `usage` record booked. */
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

/** A session's helpers (agents whose session it is, other than itself). */
export function helpersOf(s: UsageState, session: string): AgentUsage[] {
  const out: AgentUsage[] = [];
  for (const a of s.agents.values()) if (a.session === session && a.id !== session) out.push(a);
  return out;
}

export const RECORD_STEPS: Readonly<Record<string, UsageStep>> = {
  'usage': applyReport,
};
