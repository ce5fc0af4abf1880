// Cost you can believe (issue 31, point 2), over real HTTP in shared mode: a
// session with two sub-agents costs the sum of its own and their calls,
// priced by the dated price table kept in the repo; the per-model breakdown
// names a model once (Claude Code's `[1m]` suffix and the plain name are one
// model); a model without a price is unpriced with its tokens, never $0; a
// priced model is never $0 (a vendor's 0, a count too small to round); the
// project's owner overrides a price (an event), an editor cannot.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { call, makeUser, mintToken, sharedServer, type Caller, type SharedServer } from './support/shared.js';
import { costLabel, modelName } from '../src/core/usage.js';
import { PRICE_TABLE } from '../src/core/prices.js';

const SID = 'b311eve0-0000-4000-8000-000000000031';
const SESSION = `claude-code:${SID}`;

let seq = 0;
/** One Claude Code `api_request` record (no `cost_usd`: priced from the table, as for a vendor that reports none). */
function apiRequest(t: { model: string; sub?: string; input?: number; output?: number; cacheRead?: number; cacheWrite?: number; cost?: number }): unknown {
  const s = (key: string, v: string) => ({ key, value: { stringValue: v } });
  seq++;
  return {
    timeUnixNano: String(Date.now() * 1e6),
    attributes: [
      s('session.id', SID),
      s('event.name', 'api_request'),
      s('event.timestamp', new Date().toISOString()),
      { key: 'event.sequence', value: { intValue: seq } },
      s('prompt.id', 'p1'),
      s('model', t.model),
      ...(t.sub ? [s('agent.name', t.sub)] : []),
      s('input_tokens', String(t.input ?? 0)),
      s('output_tokens', String(t.output ?? 0)),
      s('cache_read_tokens', String(t.cacheRead ?? 0)),
      s('cache_creation_tokens', String(t.cacheWrite ?? 0)),
      ...(t.cost !== undefined ? [{ key: 'cost_usd', value: { doubleValue: t.cost } }] : []),
    ],
  };
}
const logs = (records: unknown[]) => ({ resourceLogs: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'claude-code' } }] }, scopeLogs: [{ logRecords: records }] }] });

/** The table's row for a model, read from the data file as a person would (longest prefix). */
function row(model: string) {
  const m = modelName(model);
  const prefix = Object.keys(PRICE_TABLE.rows).filter((p) => m.startsWith(p)).sort((a, b) => b.length - a.length)[0];
  return PRICE_TABLE.rows[prefix as keyof typeof PRICE_TABLE.rows];
}
const micros = (model: string, t: { input?: number; output?: number; cacheRead?: number; cacheWrite?: number }) => {
  const p = row(model);
  return Math.round(p.input * (t.input ?? 0) + p.output * (t.output ?? 0) + p.cacheRead * (t.cacheRead ?? 0) + p.cacheWrite * (t.cacheWrite ?? 0));
};

describe('cost you can believe', () => {
  let srv: SharedServer;
  let bob: Caller, bobToken: Caller;
  before(async () => {
    srv = await sharedServer();
    bob = await makeUser(srv, 'bob', 'default', 'editor');
    await makeUser(srv, 'dan', 'default', 'viewer');
    bobToken = await mintToken(srv, bob, 'default', 'editor', 'bob hook');
    const hook = async (p: Record<string, unknown>) => assert.equal((await call(srv.url, bobToken, 'POST', '/hooks/claude-code', { session_id: SID, cwd: '/tmp/shop', ...p })).status, 200);
    await hook({ hook_event_name: 'SessionStart', source: 'startup' });
    await hook({ hook_event_name: 'SubagentStart', agent_id: 'h1', agent_type: 'general-purpose' });
    await hook({ hook_event_name: 'SubagentStart', agent_id: 'h2', agent_type: 'Explore' });
  });
  after(() => srv.close());
  const usage = async () => (await call(srv.url, srv.owner, 'GET', '/usage')).json.state;

  test('the price table is a dated data file with its source', () => {
    assert.match(PRICE_TABLE.date, /^\d{4}-\d{2}-\d{2}$/);
    assert.ok(PRICE_TABLE.source.length > 20, 'it says where the prices come from');
    assert.ok(row('claude-sonnet-4-5'), 'a row for the model the test uses');
  });

  test('a session with two sub-agents costs the sum of the three, by the dated table; one model is one row', async () => {
    const lead1 = { model: 'claude-sonnet-4-5', input: 1000, output: 200, cacheRead: 5000 };
    const lead2 = { model: 'claude-sonnet-4-5[1m]', input: 2000, output: 100, cacheWrite: 400 };
    const h1 = { model: 'claude-sonnet-4-5', sub: 'general-purpose', input: 300, output: 50 };
    const h2 = { model: 'Claude-Sonnet-4-5[1m]', sub: 'Explore', input: 700, output: 20, cacheRead: 100 };
    const r = await call(srv.url, bobToken, 'POST', '/v1/logs', logs([apiRequest(lead1), apiRequest(h1), apiRequest(lead2), apiRequest(h2)]));
    assert.equal(r.status, 200);
    const u = await usage();
    const agents = new Map<string, any>(u.agents.map((a: any) => [a.id, a]));
    const lead = agents.get(SESSION);
    const a1 = agents.get(`${SESSION}/h1`);
    const a2 = agents.get(`${SESSION}/h2`);
    assert.ok(lead && a1 && a2, `the session and both helpers: ${[...agents.keys()].join(', ')}`);
    assert.equal(lead.own.costMicros, micros(lead1.model, lead1) + micros(lead2.model, lead2));
    assert.equal(a1.own.costMicros, micros(h1.model, h1));
    assert.equal(a2.own.costMicros, micros(h2.model, h2));
    const session = new Map<string, any>(u.sessions).get(SESSION);
    assert.equal(session.costMicros, lead.own.costMicros + a1.own.costMicros + a2.own.costMicros, 'the session is its own calls and its sub-agents’');
    assert.equal(session.requests, 4);
    assert.ok(session.costMicros > 0);

    const models = u.models.map(([m]: [string]) => m);
    assert.deepEqual(models, ['claude-sonnet-4-5'], 'the [1m] suffix and the case make no second row');
    assert.equal(new Map<string, any>(u.models).get('claude-sonnet-4-5').costMicros, session.costMicros);
  });

  test('a model without a price is unpriced with its tokens, never free; a priced model is never $0', async () => {
    const r = await call(srv.url, bobToken, 'POST', '/v1/logs', logs([apiRequest({ model: 'acme-coder-9', input: 1200, output: 34 }), apiRequest({ model: 'gpt-5-nano', input: 1 }), apiRequest({ model: 'claude-haiku-4-5', input: 500, output: 10, cost: 0 })]));
    assert.equal(r.status, 200);
    const m = new Map<string, any>((await usage()).models);
    const acme = m.get('acme-coder-9');
    assert.equal(acme.unpricedTokens, 1234);
    assert.equal(acme.costMicros, 0);
    assert.equal(costLabel(acme), 'unpriced', 'shown as unpriced, not $0');
    assert.ok(m.get('gpt-5-nano').costMicros > 0, 'one token of a priced model is not $0');
    assert.notEqual(costLabel(m.get('gpt-5-nano')), '$0');
    assert.equal(m.get('claude-haiku-4-5').costMicros, micros('claude-haiku-4-5', { input: 500, output: 10 }), 'a vendor’s 0 for priced tokens is priced by the table');
  });

  test('the owner overrides a price for the project (an event); an editor cannot; later records use it', async () => {
    const price = { input: 2, output: 8, cacheRead: 0.2, cacheWrite: 2.5 };
    const refused = await call(srv.url, bob, 'PUT', '/usage/prices', { model: 'acme-coder-9', price });
    assert.equal(refused.status, 403);
    const ok = await call(srv.url, srv.owner, 'PUT', '/usage/prices', { model: 'Acme-Coder-9', price });
    assert.equal(ok.status, 200, JSON.stringify(ok.json));
    const events = (await srv.store.read('usage', 0, 1000)).map((e) => JSON.parse(e.body));
    assert.ok(events.some((e) => e.type === 'prices.set' && e.model === 'acme-coder-9' && e.by === 'Ann'), 'the override is an event, by its owner');
    const u0 = await usage();
    assert.deepEqual(u0.prices.find(([m]: [string]) => m === 'acme-coder-9')?.[1].price, price);
    assert.equal((await call(srv.url, srv.owner, 'GET', '/usage')).json.priceTable.date, PRICE_TABLE.date, 'GET /usage says which table prices it');

    await call(srv.url, bobToken, 'POST', '/v1/logs', logs([apiRequest({ model: 'acme-coder-9', input: 1000, output: 100 })]));
    const acme = new Map<string, any>((await usage()).models).get('acme-coder-9');
    assert.equal(acme.costMicros, 2 * 1000 + 8 * 100, 'priced by the project’s row');
    assert.equal(acme.unpricedTokens, 1234, 'the earlier records stay unpriced (their cost was set when booked)');
    assert.match(costLabel(acme), /^\$0\.0028 \+ unpriced/);

    const cleared = await call(srv.url, srv.owner, 'PUT', '/usage/prices', { model: 'acme-coder-9', price: null });
    assert.equal(cleared.status, 200);
    assert.ok(!(await usage()).prices.some(([m]: [string]) => m === 'acme-coder-9'));
  });
});

test('modelName: one name per model, whatever the source wrote', () => {
  for (const [raw, want] of [
    ['claude-opus-4-8[1m]', 'claude-opus-4-8'],
    [' Claude-Opus-4-8 ', 'claude-opus-4-8'],
    ['claude-opus-4-8 [1m]', 'claude-opus-4-8'],
    ['models/gemini-2.5-pro', 'gemini-2.5-pro'],
    ['gpt-5-codex', 'gpt-5-codex'],
    ['', ''],
    [42, ''],
  ] as const) {
    assert.equal(modelName(raw), want, String(raw));
    assert.equal(modelName(modelName(raw)), modelName(raw), 'normalising twice changes nothing');
  }
  assert.ok(modelName('x'.repeat(10_000)).length <= 120);
});
