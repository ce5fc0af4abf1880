// Transition notices and quiet hours on two nodes sharing PostgreSQL: a
// member's choices set on one node hold on the other, and a burst of "done"
// events posted to both nodes is still one notice (each node sees the
// transition; the claim in the log makes one of them send it).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { child, type ChildServer } from './support/server.js';
import { need } from './support/env.js';
import { PG_URL, freshSchema, pgReachable } from './support/pg.js';
import { PushServiceStandin } from './support/push-service.js';
import { send } from './support/push.js';
import { until } from './support/until.js';

const reachable = await pgReachable();


describe('push notices on two nodes', { timeout: 90_000 }, () => {
  const db = freshSchema('roost_push');
  let a: ChildServer;
  let b: ChildServer;
  let ps: PushServiceStandin;
  before(async () => {
    if (!reachable) return;
    ps = await new PushServiceStandin().start();
    a = await child({ args: ['--db', db.url] });
    b = await child({ args: ['--db', db.url] });
  });
  after(async () => {
    for (const s of [a, b]) await s?.stop('SIGKILL');
    await ps?.close();
    if (reachable) await db.drop();
  });

  test('choices set on node B hold on node A; a burst of "done" posted to both nodes is one notice, a later failure one more', async (t) => {
    if (!need(t, reachable, `PostgreSQL is not reachable at ${PG_URL}`)) return;
    const { publicKey } = await (await fetch(`${a.url}/push`)).json();
    const sub = ps.subscribe(publicKey);
    assert.equal((await send(`${a.url}/push/subscriptions`, PushServiceStandin.json(sub))).status, 200);
    assert.equal((await send(`${b.url}/push/prefs`, { approval: false, quiet: { timeZone: 'Asia/Tokyo', start: '03:00', end: '03:00' } }, 'PUT')).status, 200);
    await until('node A folded the choices', async () => (await (await fetch(`${a.url}/push`)).json()).quiet?.timeZone === 'Asia/Tokyo', 15_000);
    assert.equal((await (await fetch(`${a.url}/push`)).json()).prefs.approval, false);

    assert.equal((await send(`${a.url}/events`, { type: 'status', agent: { id: 'w-1', name: 'Worker 1' }, status: 'working' })).status, 200);
    for (let i = 0; i < 20; i++) assert.equal((await send(`${(i % 2 ? b : a).url}/events`, { type: 'status', agent: 'w-1', status: 'done', activity: `end ${i}` })).status, 200);
    await ps.until((m) => m.length >= 1, 15_000);
    assert.equal((await send(`${b.url}/events`, { type: 'status', agent: 'w-1', status: 'error' })).status, 200);
    await ps.until((m) => m.length >= 2, 15_000);
    // Time for a stray second send to arrive, were there one: the nodes' floors have both folded the failure.
    await until('both nodes folded the failure', async () => {
      for (const s of [a, b]) {
        const f = await (await fetch(`${s.url}/state`)).json().catch(() => null);
        if (!f || !JSON.stringify(f).includes('"error"')) return false;
      }
      return true;
    }, 15_000);
    assert.deepEqual(
      ps.messages.map((m) => (m.payload as any).kind),
      ['done', 'failed'],
    );
  });
});
