// The usage fold (src/core/usage.ts): the roll-up's laws under property tests,
// the price table, budgets and their notices, hostile events.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { applyUsage, costOf, dueBudgetNotices, emptyUsage, priceOf, usageFromJSON, usageToJSON, type Tally, type UsageState } from '../src/core/usage.js';

const SESSIONS = ['claude-code:s1', 'codex:s2', 'gemini:s3'];
const TEAMS = ['shop', 'api'];
const MODELS = ['claude-opus-4-8', 'gpt-5', 'gemini-2.5-flash', 'no-such-model'];

/** A usage event for a session or one of its helpers. */
const report = fc.record({
  s: fc.integer({ min: 0, max: SESSIONS.length - 1 }),
  helper: fc.option(fc.constantFrom('general-purpose', 'default', 'generalist'), { nil: undefined }),
  model: fc.constantFrom(...MODELS),
  day: fc.constantFrom('2026-11-30', '2026-12-01', '2026-12-02'),
  input: fc.nat(100_000),
  output: fc.nat(10_000),
  cacheRead: fc.nat(50_000),
  cacheWrite: fc.nat(5_000),
  costMicros: fc.nat(1_000_000),
});

type Report = typeof report extends fc.Arbitrary<infer T> ? T : never;

function event(r: Report, i: number) {
  const session = SESSIONS[r.s];
  return {
    type: 'usage',
    id: `k${i}`,
    agent: r.helper ? `${session}/${r.helper}` : session,
    parent: r.helper ? session : undefined,
    session,
    // A session's team is fixed by its first event: derive it from the session.
    team: TEAMS[r.s % TEAMS.length],
    source: 'test',
    model: r.model,
    day: r.day,
    input: r.input,
    output: r.output,
    cacheRead: r.cacheRead,
    cacheWrite: r.cacheWrite,
    costMicros: r.costMicros,
  };
}

function fold(events: unknown[], s: UsageState = emptyUsage()): UsageState {
  for (const e of events) applyUsage(s, e);
  return s;
}

const sum = (ts: Iterable<Tally>, k: keyof Tally) => [...ts].reduce((a, t) => a + t[k], 0);
const KEYS: (keyof Tally)[] = ['input', 'output', 'cacheRead', 'cacheWrite', 'costMicros', 'requests'];

test('every breakdown adds up to the project: agents, sessions, teams, models, days', () => {
  fc.assert(
    fc.property(fc.array(report, { maxLength: 60 }), (rs) => {
      const s = fold(rs.map(event));
      for (const k of KEYS) {
        const p = s.project[k];
        assert.equal(sum([...s.agents.values()].map((a) => a.own), k), p, `agents' own ${k}`);
        assert.equal(sum(s.sessions.values(), k), p, `sessions ${k}`);
        assert.equal(sum(s.teams.values(), k), p, `teams ${k}`);
        assert.equal(sum(s.models.values(), k), p, `models ${k}`);
        assert.equal(sum(s.days.values(), k), p, `days ${k}`);
      }
      // A session's tally is its own requests plus its helpers'.
      for (const [id, t] of s.sessions) {
        const mine = [...s.agents.values()].filter((a) => a.session === id);
        assert.equal(sum(mine.map((a) => a.own), 'input'), t.input);
      }
    }),
    { numRuns: 200 },
  );
});

test('order does not matter, and folding a prefix then the rest equals folding all (JSON round trip between)', () => {
  fc.assert(
    fc.property(fc.array(report, { maxLength: 40 }), fc.nat(), (rs, cut) => {
      const events = rs.map(event);
      const all = fold(events);
      const k = events.length ? cut % (events.length + 1) : 0;
      const split = fold(events.slice(k), usageFromJSON(JSON.parse(JSON.stringify(usageToJSON(fold(events.slice(0, k)))))));
      assert.deepEqual(usageToJSON(split), usageToJSON(all));
      const reversed = fold([...events].reverse());
      assert.deepEqual(reversed.project, all.project);
      assert.deepEqual([...reversed.sessions].sort(), [...all.sessions].sort());
    }),
    { numRuns: 200 },
  );
});

test('hostile events never throw and never make a total negative, fractional or unsafe', () => {
  fc.assert(
    fc.property(fc.array(fc.oneof(fc.jsonValue(), report.map((r) => ({ ...event(r, 0), input: -5, output: 1e300, costMicros: Number.NaN, agent: 'x'.repeat(10_000) })))), (es) => {
      const s = fold(es);
      for (const k of KEYS) assert.ok(Number.isSafeInteger(s.project[k]) && s.project[k] >= 0, k);
      for (const a of s.agents.keys()) assert.ok(a.length <= 128);
    }),
    { numRuns: 300 },
  );
  for (const t of ['constructor', '__proto__', 'toString']) {
    const s = fold([{ type: 'usage', agent: t, session: t, team: t, model: t, day: '2026-12-01', input: 1 }]);
    assert.equal(s.agents.get(t)?.own.input, 1, `${t} is an ordinary id`);
  }
});

test('cost: the vendor’s own figure wins; else the dated table by the longest model prefix; else unpriced, never guessed', () => {
  assert.deepEqual(costOf('claude-opus-4-8', { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 }, 0.00231), { costMicros: 2310, costFrom: 'vendor' });
  // gpt-5: $1.25 in, $10 out per million → 1,000 in + 100 out = 1,250 + 1,000 µ$.
  assert.equal(costOf('gpt-5', { input: 1000, output: 100, cacheRead: 0, cacheWrite: 0 }).costMicros, 2250);
  assert.match(costOf('gpt-5', { input: 1, output: 0, cacheRead: 0, cacheWrite: 0 }).costFrom, /^table:\d{4}-\d{2}-\d{2}$/);
  assert.equal(priceOf('gemini-2.5-flash-lite')?.input, 0.1, 'the longest prefix wins (flash-lite over flash)');
  assert.equal(priceOf('claude-opus-4-8[1m]')?.input, 5, 'a context-size suffix is ignored');
  // Opus 4.5 and later cost a third of Opus 4 and 4.1 (each by its own row, the longest prefix).
  assert.deepEqual(['claude-opus-4-5-20251101', 'claude-opus-4-8', 'claude-opus-4-1-20250805', 'claude-opus-4-20250514', 'claude-opus-4-0'].map((m) => priceOf(m)?.output), [25, 25, 75, 75, 75]);
  assert.deepEqual(costOf('gemini-standin', { input: 5, output: 5, cacheRead: 0, cacheWrite: 0 }), { costMicros: 0, costFrom: 'unknown' });
  const s = fold([{ type: 'usage', agent: 'a', model: 'gemini-standin', input: 5, output: 5, costFrom: 'unknown' }]);
  assert.equal(s.project.unpricedTokens, 10);
});

test('a budget: notices are due at 80% and at 100%, once each per budget; a new budget re-arms them', () => {
  const s = emptyUsage();
  applyUsage(s, { type: 'budget.set', limitMicros: 1_000_000, by: 'alice' });
  applyUsage(s, { type: 'usage', agent: 'a', model: 'm', input: 1, costMicros: 790_000 });
  assert.deepEqual(dueBudgetNotices(s), []);
  applyUsage(s, { type: 'usage', agent: 'a', model: 'm', input: 1, costMicros: 10_000 });
  assert.deepEqual(dueBudgetNotices(s), [80]);
  const fx = applyUsage(s, { type: 'budget.crossed', threshold: 80, version: 1, costMicros: 800_000 });
  assert.deepEqual(fx, [{ kind: 'budget', budget: 'project::total', threshold: 80, costMicros: 800_000, limitMicros: 1_000_000 }]);
  assert.deepEqual(applyUsage(s, { type: 'budget.crossed', threshold: 80, version: 1 }), [], 'a second notice for the same threshold is a no-op');
  applyUsage(s, { type: 'usage', agent: 'a', model: 'm', input: 1, costMicros: 300_000 });
  assert.deepEqual(dueBudgetNotices(s), [100]);
  applyUsage(s, { type: 'budget.crossed', threshold: 100, version: 1 });
  assert.deepEqual(dueBudgetNotices(s), []);
  applyUsage(s, { type: 'budget.set', limitMicros: 10_000_000, by: 'alice' });
  assert.equal(s.budget?.version, 2);
  assert.deepEqual(dueBudgetNotices(s), [], 'under the new budget nothing is due');
  assert.deepEqual(applyUsage(s, { type: 'budget.crossed', threshold: 80, version: 1 }), [], 'a notice for an old budget is a no-op');
  applyUsage(s, { type: 'budget.set', limitMicros: 0 });
  assert.equal(s.budget, null, '0 clears the budget');
});
