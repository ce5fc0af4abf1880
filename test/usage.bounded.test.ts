// Bounded cost booking (issue 37, point 7), over real HTTP in shared mode:
// an editor's token sends OTLP records; a record no real model could make
// (2e9 tokens, or a cost of $200,000) and records for a session nobody's
// hooks have seen are not booked but counted as refused (GET /usage shows how
// many and why); one session books at most what a real model can spend per
// minute; what is booked names the token that reported it.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { call, makeUser, mintToken, sharedServer, type Caller, type SharedServer } from './support/shared.js';
import { PLAUSIBLE } from '../src/core/usage.js';

const SID = '5e551011-0000-4000-8000-000000000001';

let seq = 0;
/** One Claude Code `api_request` record, as Claude Code exports it. */
function apiRequest(session: string, t: { input?: number; output?: number; cacheRead?: number; cost?: number }): unknown {
  const s = (key: string, v: string) => ({ key, value: { stringValue: v } });
  const i = (key: string, v: number) => ({ key, value: { intValue: v } });
  seq++;
  return {
    timeUnixNano: String(Date.now() * 1e6),
    body: { stringValue: 'claude_code.api_request' },
    attributes: [
      s('session.id', session),
      s('event.name', 'api_request'),
      s('event.timestamp', new Date().toISOString()),
      i('event.sequence', seq),
      s('prompt.id', 'p1'),
      s('model', 'claude-sonnet-4-5-20250929'),
      s('input_tokens', String(t.input ?? 10)),
      s('output_tokens', String(t.output ?? 10)),
      s('cache_read_tokens', String(t.cacheRead ?? 0)),
      s('cache_creation_tokens', '0'),
      ...(t.cost !== undefined ? [{ key: 'cost_usd', value: { doubleValue: t.cost } }] : []),
    ],
  };
}

function logs(records: unknown[]): unknown {
  return { resourceLogs: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'claude-code' } }] }, scopeLogs: [{ logRecords: records }] }] };
}

describe('OTLP usage in shared mode: bounded, to sessions that exist, to the token', () => {
  let srv: SharedServer;
  let bobToken: Caller, catToken: Caller, danToken: Caller, eve: Caller;

  before(async () => {
    srv = await sharedServer();
    const bob = await makeUser(srv, 'bob', 'default', 'editor');
    const cat = await makeUser(srv, 'cat', 'default', 'editor');
    const dan = await makeUser(srv, 'dan', 'default', 'viewer');
    eve = await makeUser(srv, 'eve', null);
    bobToken = await mintToken(srv, bob, 'default', 'editor', 'bob hook');
    danToken = await mintToken(srv, dan, 'default', 'viewer');
    catToken = await mintToken(srv, cat, 'default', 'editor', 'cat hook');
    // Bob's hooks start the session (as Claude Code's SessionStart does before its first request).
    const h = await call(srv.url, bobToken, 'POST', '/hooks/claude-code', { session_id: SID, hook_event_name: 'SessionStart', cwd: '/tmp/shop', source: 'startup' });
    assert.equal(h.status, 200, JSON.stringify(h.json));
  });
  after(() => srv.close());

  const usage = async () => (await call(srv.url, srv.owner, 'GET', '/usage')).json.state;

  test('a viewer and an outsider cannot send usage', async () => {
    assert.equal((await call(srv.url, danToken, 'POST', '/v1/logs', logs([apiRequest(SID, {})]))).status, 403);
    assert.equal((await call(srv.url, eve, 'POST', '/v1/logs', logs([apiRequest(SID, {})]))).status, 403);
  });

  test('2e9 tokens in one 1 KB record, a $200,000 record, and a made-up session: refused and counted, nothing booked', async () => {
    const before = (await usage()).project;
    const r = await call(srv.url, bobToken, 'POST', '/v1/logs', logs([apiRequest(SID, { input: 2e9 }), apiRequest(SID, { cost: 200_000 }), apiRequest('made-up-session', { input: 100 })]));
    assert.equal(r.status, 200, 'the exporter is told OK (it must not retry); the records are refused, not stored');
    const u = await usage();
    assert.equal(u.project.costMicros, before.costMicros, 'no cost booked');
    assert.equal(u.project.input, before.input, 'no tokens booked');
    assert.equal(u.refused.records, 3);
    assert.ok(u.refused.reasons['tokens per record'] >= 1, JSON.stringify(u.refused));
    assert.ok(u.refused.reasons['cost per record'] >= 1, JSON.stringify(u.refused));
    assert.ok(u.refused.reasons['unknown session'] >= 1, JSON.stringify(u.refused));
    assert.ok(!u.agents.some((a: any) => a.id.includes('made-up-session')), 'no agent for a made-up session');
  });

  test('a plausible record is booked to the session, naming the token that reported it', async () => {
    const r = await call(srv.url, bobToken, 'POST', '/v1/logs', logs([apiRequest(SID, { input: 1000, output: 200, cost: 0.006 })]));
    assert.equal(r.status, 200);
    const u = await usage();
    const a = u.agents.find((x: any) => x.id === `claude-code:${SID}`);
    assert.ok(a, 'booked to the session the hooks started');
    assert.equal(a.own.input, 1000);
    assert.equal(a.own.costMicros, 6000);
    const events = await srv.store.read('usage', 0, 1000);
    const booked = events.map((e) => JSON.parse(e.body)).find((e) => e.type === 'usage' && e.input === 1000);
    assert.equal(booked.reporter, `token:${bobToken.tokenId}`);
  });

  test("another editor's token cannot book to Bob's session", async () => {
    const before = (await usage()).project;
    const r = await call(srv.url, catToken, 'POST', '/v1/logs', logs([apiRequest(SID, { input: 5000, output: 100 })]));
    assert.equal(r.status, 200);
    const u = await usage();
    assert.equal(u.project.input, before.input, 'nothing booked');
    assert.equal(u.refused.reasons["another person's session"], 1);
  });

  test(`one session books at most ${PLAUSIBLE.sessionTokensPerMinute} tokens a minute; the rest is refused`, async () => {
    const before = await usage();
    const each = PLAUSIBLE.recordTokens - 1000;
    const n = Math.ceil(PLAUSIBLE.sessionTokensPerMinute / each) + 3;
    const r = await call(srv.url, bobToken, 'POST', '/v1/logs', logs(Array.from({ length: n }, () => apiRequest(SID, { cacheRead: each - 20 }))));
    assert.equal(r.status, 200);
    const u = await usage();
    const booked = u.project.cacheRead - before.project.cacheRead;
    assert.ok(booked <= PLAUSIBLE.sessionTokensPerMinute, `booked ${booked} cache reads in a minute`);
    assert.ok(booked > 0, 'the plausible part is booked');
    assert.ok(u.refused.reasons['session tokens per minute'] >= 3, JSON.stringify(u.refused));
  });
});
