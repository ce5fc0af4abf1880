// Budgets in the usage fold (src/core/usage.ts, "Budgets"): per team, per
// agent (a session with its helpers) and per day in a time zone, in USD or
// tokens; crossings at 80% and 100%, the pause and its end, the day rollover.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyUsage, budgetNotices, budgetReason, dayIn, dueCrossings, emptyUsage, pausedFor, usageFromJSON, usageToJSON, USAGE_LIMITS, type UsageState } from '../src/core/usage.js';

const H = 3_600_000;
/** 2026-12-05 10:00 UTC. */
const T0 = Date.UTC(2026, 11, 5, 10);

let n = 0;
function spend(s: UsageState, o: { agent: string; session?: string; team: string; usd?: number; tokens?: number; ts: number }) {
  const session = o.session ?? o.agent;
  applyUsage(s, {
    type: 'usage',
    id: `u${++n}`,
    agent: o.agent,
    parent: session !== o.agent ? session : undefined,
    session,
    team: o.team,
    model: 'claude-sonnet-4-5',
    day: new Date(o.ts).toISOString().slice(0, 10),
    input: o.tokens ?? 10,
    output: 0,
    cacheRead: 0,
    cacheWrite: 0,
    costMicros: Math.round((o.usd ?? 0) * 1_000_000),
    ts: o.ts,
  });
}

/** What the server does: writes each due crossing, and the pause with a 100% one. */
function cross(s: UsageState, ts: number): string[] {
  const out: string[] = [];
  for (const c of dueCrossings(s)) {
    const b = c.budget;
    applyUsage(s, { type: 'budget.crossed', budget: b.key, threshold: c.threshold, version: b.version, day: b.day, spent: c.spent, ts });
    if (c.threshold === 100) applyUsage(s, { type: 'budget.paused', budget: b.key, version: b.version, day: b.day, ts });
    out.push(`${b.key}@${c.threshold}`);
  }
  return out;
}

test("a team's budget: 80% and 100% of its own spend, once each; other teams' spend does not count; 100% pauses that team only", () => {
  const s = emptyUsage();
  applyUsage(s, { type: 'budget.set', scope: 'team', target: 'backend', unit: 'usd', limit: 25_000_000, by: 'owner', ts: T0 });
  spend(s, { agent: 'claude-code:a', team: 'backend', usd: 19, ts: T0 + 1 });
  spend(s, { agent: 'claude-code:b', team: 'frontend', usd: 100, ts: T0 + 2 });
  assert.deepEqual(cross(s, T0), [], '19 $ of 25 $ is under 80%; the other team spent on its own account');
  spend(s, { agent: 'claude-code:a', team: 'backend', usd: 1, ts: T0 + 3 });
  assert.deepEqual(cross(s, T0), ['team:backend:total@80']);
  assert.deepEqual(cross(s, T0), [], 'a crossing is due once');
  spend(s, { agent: 'claude-code:a2', team: 'backend', usd: 5, ts: T0 + 4 });
  assert.deepEqual(cross(s, T0), ['team:backend:total@100']);
  const paused = pausedFor(s, { session: 'claude-code:a2', teams: ['backend'] }, T0 + 5);
  assert.equal(paused?.key, 'team:backend:total');
  assert.equal(budgetReason(s, paused, 'default', T0 + 5), 'budget for team backend reached: 25.00 $ of 25.00 $');
  assert.equal(pausedFor(s, { session: 'claude-code:b', teams: ['frontend'] }, T0 + 5), null, 'another team is not paused');
  // A raise ends the pause at once and re-arms the thresholds of the new version.
  applyUsage(s, { type: 'budget.set', scope: 'team', target: 'backend', unit: 'usd', limit: 50_000_000, by: 'owner', ts: T0 + 6 });
  assert.equal(pausedFor(s, { teams: ['backend'] }, T0 + 7), null);
  assert.equal(s.budgets.get('team:backend:total')?.version, 2);
  assert.deepEqual(cross(s, T0), [], '25 $ of 50 $');
});

test("an agent's budget is its session's spend with its helpers'", () => {
  const s = emptyUsage();
  applyUsage(s, { type: 'budget.set', scope: 'agent', target: 'claude-code:lead', unit: 'tokens', limit: 1000, by: 'owner', ts: T0 });
  spend(s, { agent: 'claude-code:lead', team: 't', tokens: 500, ts: T0 + 1 });
  spend(s, { agent: 'claude-code:lead/general-purpose', session: 'claude-code:lead', team: 't', tokens: 300, ts: T0 + 2 });
  assert.deepEqual(cross(s, T0), ['agent:claude-code:lead:total@80'], 'the helper counts for its session');
  spend(s, { agent: 'claude-code:lead/explore', session: 'claude-code:lead', team: 't', tokens: 200, ts: T0 + 3 });
  spend(s, { agent: 'claude-code:other', team: 't', tokens: 10_000, ts: T0 + 3 });
  assert.deepEqual(cross(s, T0), ['agent:claude-code:lead:total@100']);
  const b = pausedFor(s, { session: 'claude-code:lead' }, T0 + 4);
  assert.equal(budgetReason(s, b!, 'default'), 'budget for agent claude-code:lead (with its sub-agents) reached: 1,000 tokens of 1,000 tokens');
  assert.equal(pausedFor(s, { session: 'claude-code:other' }, T0 + 4), null);
  // Lifted without a raise: not paused, and it does not pause again for this version.
  applyUsage(s, { type: 'budget.lifted', budget: 'agent:claude-code:lead:total', by: 'owner', ts: T0 + 5 });
  spend(s, { agent: 'claude-code:lead', team: 't', tokens: 500, ts: T0 + 6 });
  assert.deepEqual(cross(s, T0), []);
  assert.equal(pausedFor(s, { session: 'claude-code:lead' }, T0 + 7), null);
});

test("a team's day budget counts that day only and starts again the next day (UTC)", () => {
  const s = emptyUsage();
  applyUsage(s, { type: 'budget.set', scope: 'team', target: 'backend', period: 'day', unit: 'usd', limit: 10_000_000, by: 'owner', ts: T0 });
  spend(s, { agent: 'claude-code:a', team: 'backend', usd: 10, ts: T0 + H });
  assert.deepEqual(cross(s, T0), ['team:backend:day@80', 'team:backend:day@100']);
  const b = pausedFor(s, { teams: ['backend'] }, T0 + 2 * H);
  assert.equal(budgetReason(s, b!, 'default', T0 + 2 * H), 'budget for team backend reached: 10.00 $ of 10.00 $ today');
  // The next UTC day: the pause is over without anyone lifting it (it was of that day) …
  const nextDay = Date.UTC(2026, 11, 6, 0, 30);
  assert.equal(pausedFor(s, { teams: ['backend'] }, nextDay), null);
  // … and the day's spend starts from zero at its first record.
  spend(s, { agent: 'claude-code:a', team: 'backend', usd: 3, ts: nextDay });
  const day = s.budgets.get('team:backend:day')!;
  assert.equal(day.day, '2026-12-06');
  assert.equal(day.dayMicros, 3_000_000);
  assert.deepEqual(day.notified, []);
  assert.deepEqual(cross(s, nextDay), []);
  // A late record of the day before does not count for today.
  spend(s, { agent: 'claude-code:a', team: 'backend', usd: 50, ts: T0 + 3 * H });
  assert.equal(s.budgets.get('team:backend:day')!.dayMicros, 3_000_000);
});

test('a day budget in a time zone rolls over at that zone\'s midnight, not UTC\'s', () => {
  // Asia/Tokyo is UTC+9 (no daylight saving): 2026-12-05 14:59 UTC is 23:59 there, 15:00 UTC is the 6th.
  assert.equal(dayIn(Date.UTC(2026, 11, 5, 14, 59), 'Asia/Tokyo'), '2026-12-05');
  assert.equal(dayIn(Date.UTC(2026, 11, 5, 15, 0), 'Asia/Tokyo'), '2026-12-06');
  assert.equal(dayIn(Date.UTC(2026, 11, 5, 15, 0), 'No/Such_Zone'), '2026-12-05', 'an unknown zone reads as UTC');
  const s = emptyUsage();
  applyUsage(s, { type: 'budget.set', scope: 'project', period: 'day', unit: 'usd', limit: 5_000_000, tz: 'Asia/Tokyo', by: 'owner', ts: Date.UTC(2026, 11, 5, 1) });
  spend(s, { agent: 'x', team: 't', usd: 5, ts: Date.UTC(2026, 11, 5, 14, 0) });
  assert.deepEqual(cross(s, 0), ['project::day@80', 'project::day@100']);
  const b = pausedFor(s, {}, Date.UTC(2026, 11, 5, 14, 30));
  assert.equal(budgetReason(s, b!, 'shop', Date.UTC(2026, 11, 5, 14, 30)), 'budget for project shop reached: 5.00 $ of 5.00 $ today (Asia/Tokyo)');
  // Still the 5th in UTC, already the 6th in Tokyo: the pause is over, the day starts again.
  assert.equal(pausedFor(s, {}, Date.UTC(2026, 11, 5, 15, 30)), null);
  spend(s, { agent: 'x', team: 't', usd: 1, ts: Date.UTC(2026, 11, 5, 15, 30) });
  assert.equal(s.budgets.get('project::day')!.day, '2026-12-06');
  assert.equal(s.budgets.get('project::day')!.dayMicros, 1_000_000);
});

test('a lift folded before its pause (another node wrote the pause) holds: the late pause does not pause again', () => {
  const s = emptyUsage();
  applyUsage(s, { type: 'budget.set', scope: 'team', target: 'ops', unit: 'usd', limit: 1_000_000, ts: T0 });
  spend(s, { agent: 'claude-code:o', team: 'ops', usd: 2, ts: T0 + 1 });
  assert.equal(pausedFor(s, { teams: ['ops'] }, T0 + 2)?.key, 'team:ops:total', 'spent: paused by the fold before any pause is written');
  applyUsage(s, { type: 'budget.lifted', budget: 'team:ops:total', by: 'owner', ts: T0 + 3 });
  assert.equal(pausedFor(s, { teams: ['ops'] }, T0 + 4), null);
  applyUsage(s, { type: 'budget.crossed', budget: 'team:ops:total', threshold: 100, version: 1, ts: T0 + 5 });
  applyUsage(s, { type: 'budget.paused', budget: 'team:ops:total', version: 1, ts: T0 + 5 });
  assert.equal(pausedFor(s, { teams: ['ops'] }, T0 + 6), null);
  assert.equal(pausedFor(usageFromJSON(JSON.parse(JSON.stringify(usageToJSON(s)))), { teams: ['ops'] }, T0 + 6), null, 'and after a snapshot');
});

test('budgets survive the snapshot round trip, a project holds at most USAGE_LIMITS.budgets, hostile sets are ignored', () => {
  const s = emptyUsage();
  for (let i = 0; i < USAGE_LIMITS.budgets + 5; i++) applyUsage(s, { type: 'budget.set', scope: 'team', target: `t${i}`, unit: 'tokens', limit: 100, ts: T0 });
  assert.equal(s.budgets.size, USAGE_LIMITS.budgets);
  applyUsage(s, { type: 'budget.set', scope: 'team', target: 't0', unit: 'tokens', limit: 0, ts: T0 });
  assert.equal(s.budgets.size, USAGE_LIMITS.budgets - 1, '0 removes one');
  for (const bad of [{ scope: 'galaxy', limit: 1 }, { scope: 'team', limit: 1 }, { scope: 'team', target: 'x', limit: -5 }, { scope: 'agent', target: 'x', limit: 'lots' }, { scope: 'team', target: 'constructor', limit: 0 }]) applyUsage(s, { type: 'budget.set', ...bad, ts: T0 });
  assert.equal(s.budgets.size, USAGE_LIMITS.budgets - 1);
  spend(s, { agent: 'a', team: 't1', tokens: 100, ts: T0 });
  cross(s, T0);
  const back = usageFromJSON(JSON.parse(JSON.stringify(usageToJSON(s))));
  assert.deepEqual([...back.budgets.values()], [...s.budgets.values()]);
  assert.equal(pausedFor(back, { teams: ['t1'] }, T0)?.key, 'team:t1:total');
  // The legacy project budget is the same object in both views.
  applyUsage(s, { type: 'budget.set', limitMicros: 2_000_000, by: 'owner', ts: T0 });
  assert.equal(s.budget, s.budgets.get('project::total'));
});

test("the inbox's budget notices: a budget's last crossing of its version and day, the pause with its written reason, gone after a raise or a new day", () => {
  const s = emptyUsage();
  applyUsage(s, { type: 'budget.set', scope: 'team', target: 'backend', period: 'day', unit: 'usd', limit: 1_000_000, ts: T0 });
  assert.deepEqual(budgetNotices(s, 'shop', T0), []);
  spend(s, { agent: 'claude-code:a', team: 'backend', usd: 0.85, ts: T0 + 1 });
  assert.deepEqual(budgetNotices(s, 'shop', T0 + 2), [], 'due, not yet written: no notice');
  applyUsage(s, { type: 'budget.crossed', budget: 'team:backend:day', threshold: 80, version: 1, day: '2026-12-05', ts: T0 + 2 });
  let [n] = budgetNotices(s, 'shop', T0 + 3);
  assert.deepEqual({ id: n.id, label: n.label, threshold: n.threshold, at: n.at, paused: n.paused }, { id: 'team:backend:day:1:2026-12-05:80', label: 'team backend', threshold: 80, at: T0 + 2, paused: null });
  spend(s, { agent: 'claude-code:a', team: 'backend', usd: 0.2, ts: T0 + 4 });
  applyUsage(s, { type: 'budget.crossed', budget: 'team:backend:day', threshold: 100, version: 1, day: '2026-12-05', ts: T0 + 5 });
  applyUsage(s, { type: 'budget.paused', budget: 'team:backend:day', version: 1, day: '2026-12-05', reason: 'budget for team backend reached: 1.05 $ of 1.00 $ today', ts: T0 + 5 });
  const all = budgetNotices(s, 'shop', T0 + 6);
  assert.equal(all.length, 1, 'one notice per budget');
  assert.deepEqual([all[0].id, all[0].paused], ['team:backend:day:1:2026-12-05:100', 'budget for team backend reached: 1.05 $ of 1.00 $ today']);
  // The reason survives a snapshot (what a browser starts from).
  [n] = budgetNotices(usageFromJSON(JSON.parse(JSON.stringify(usageToJSON(s)))), 'shop', T0 + 6);
  assert.equal(n.paused, 'budget for team backend reached: 1.05 $ of 1.00 $ today');
  // Lifted: the crossing stands, the pause does not.
  applyUsage(s, { type: 'budget.lifted', budget: 'team:backend:day', by: 'owner', why: 'lifted', ts: T0 + 7 });
  [n] = budgetNotices(s, 'shop', T0 + 8);
  assert.deepEqual([n.threshold, n.paused], [100, null]);
  // The next day in its zone: nothing stands.
  assert.deepEqual(budgetNotices(s, 'shop', T0 + 24 * H), []);
  // A raise is a new version: its notices start again.
  applyUsage(s, { type: 'budget.set', scope: 'team', target: 'backend', period: 'day', unit: 'usd', limit: 5_000_000, ts: T0 + 9 });
  assert.deepEqual(budgetNotices(s, 'shop', T0 + 10), []);
});
