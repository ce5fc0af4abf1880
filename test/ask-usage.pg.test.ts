// Questions and usage on two PostgreSQL nodes in shared mode: the asker and
// the refusal to answer one's own question hold whichever node decides (the
// rule travels with the request in the log); a project's own price set on
// one node prices the records the other node books; refused records counted
// on one node show on the other.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openStore } from '../src/storage/index.js';
import { startRoost, type Roost } from '../src/server/index.js';
import { createOwner } from '../src/cli/owner.js';
import { need } from './support/env.js';
import { PG_URL, freshSchema, pgReachable } from './support/pg.js';
import { tempDir } from './support/server.js';
import { call, headersOf, login, makeUser, mintToken, type Caller } from './support/shared.js';
import { until } from './support/until.js';

const reachable = await pgReachable();
const SID = '9e000000-0000-4000-8000-0000000000a5';

const logs = (model: string, seq: number, input: number) => ({
  resourceLogs: [
    {
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'claude-code' } }] },
      scopeLogs: [
        {
          logRecords: [
            {
              timeUnixNano: String(Date.now() * 1e6),
              attributes: [
                { key: 'session.id', value: { stringValue: SID } },
                { key: 'event.name', value: { stringValue: 'api_request' } },
                { key: 'event.sequence', value: { intValue: seq } },
                { key: 'model', value: { stringValue: model } },
                { key: 'input_tokens', value: { stringValue: String(input) } },
              ],
            },
          ],
        },
      ],
    },
  ],
});

describe('questions and usage on two PostgreSQL nodes', { timeout: 90_000 }, () => {
  const db = freshSchema('roost_askusage');
  let a: Roost & { owner: Caller };
  let b: Roost;
  let bob: Caller, bobToken: Caller;

  before(async () => {
    if (!reachable) return;
    const s1 = await openStore({ db: db.url, dataDir: tempDir() });
    await createOwner(s1, 'ann', 'ann-password', 'Ann');
    const ra = await startRoost(s1, { port: 0 });
    a = Object.assign(ra, { owner: await login(ra.url, 'ann', 'ann-password') });
    b = await startRoost(await openStore({ db: db.url, dataDir: tempDir() }), { port: 0 });
    bob = await makeUser(a, 'bob', 'default', 'editor');
    bobToken = await mintToken(a, bob, 'default', 'editor', 'bob hook');
  });
  after(async () => {
    await a?.close();
    await b?.close();
    if (reachable) await db.drop();
  });

  test('a question asked on A: its token cannot answer it on B; Bob answers it on B and A hears yes', async (t) => {
    if (!need(t, reachable, `PostgreSQL is not reachable at ${PG_URL}`)) return;
    const answer = fetch(a.url + '/ask', {
      method: 'POST',
      headers: { ...headersOf(bobToken, a.url, 'POST'), 'content-type': 'application/json' },
      body: JSON.stringify({ question: 'Deploy?', agent: 'claude-code:x', name: 'Ann' }),
    }).then(async (r) => ({ status: r.status, json: await r.json() }));
    // Bob's sign-in on B (identity is folded on every node).
    const bobOnB = await until('bob signs in on B', async () => login(b.url, 'bob', 'bob-password').catch(() => null), 10_000);
    const q = await until('the question on B', async () => (await call(b.url, bobOnB, 'GET', '/approvals')).json?.pending?.find((x: any) => x.input === 'Deploy?'), 10_000);
    assert.match(q.askerName, /^Bob\b/);
    const self = await call(b.url, bobToken, 'POST', `/approvals/${q.id}/decision`, { decision: 'allow' });
    assert.equal(self.status, 403, JSON.stringify(self.json));
    const yes = await call(b.url, bobOnB, 'POST', `/approvals/${q.id}/decision`, { decision: 'allow' });
    assert.equal(yes.status, 200, JSON.stringify(yes.json));
    assert.equal((await answer).json.answer, 'yes');
  });

  test('a price set on A prices what B books; what B refuses shows on A', async (t) => {
    if (!need(t, reachable, `PostgreSQL is not reachable at ${PG_URL}`)) return;
    assert.equal((await call(a.url, bobToken, 'POST', '/hooks/claude-code', { session_id: SID, hook_event_name: 'SessionStart', cwd: '/tmp/shop', source: 'startup' })).status, 200);
    const price = { input: 4, output: 0, cacheRead: 0, cacheWrite: 0 };
    assert.equal((await call(a.url, a.owner, 'PUT', '/usage/prices', { model: 'acme-coder-9', price })).status, 200);
    // B hears of the price and of the session through the commit wake-up.
    await until('B knows the price', async () => ((await call(b.url, bobToken, 'GET', '/usage')).json.state.prices ?? []).some(([m]: [string]) => m === 'acme-coder-9'), 10_000);
    await until('B books to the session', async () => {
      assert.equal((await call(b.url, bobToken, 'POST', '/v1/logs', logs('acme-coder-9', 1, 1000))).status, 200);
      const m = new Map<string, any>((await call(b.url, bobToken, 'GET', '/usage')).json.state.models);
      return m.get('acme-coder-9')?.costMicros === 4000;
    }, 10_000);
    assert.equal((await call(b.url, bobToken, 'POST', '/v1/logs', logs('acme-coder-9', 2, 3e9))).status, 200);
    await until('A counts the refused record', async () => (await call(a.url, a.owner, 'GET', '/usage')).json.state.refused.reasons['tokens per record'] === 1, 10_000);
  });
});
