// Issue 36's flock rules on PostgreSQL (the built CLI, `--db`): a trusted
// flock's burst of solo items rotates over all eight crows; a refused rate
// pranks every flying list of its requester; MaxSpunCrows as a setting; and
// after a restart on the same database the pranks and the registry are what
// they were (the fold reads them back from the log).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { child } from './support/server.js';
import { flockModel } from './support/flock-model.js';
import { flockClient } from './support/flock-client.js';
import { trustFlock } from './support/flock-trust.js';
import { openSse } from './support/sse.js';
import { need } from './support/env.js';
import { PG_URL, freshSchema, pgReachable } from './support/pg.js';

const reachable = await pgReachable();
const db = freshSchema('roost_flock_contract');
after(async () => {
  if (reachable) await db.drop();
});


test('on PostgreSQL: rotation over the flock, the prank on every flying list, MaxSpunCrows; the same after a restart', { timeout: 240_000 }, async (t) => {
  if (!need(t, reachable, `PostgreSQL is not reachable at ${PG_URL}`)) return;
  const model = await flockModel('anthropic');
  const env = { ANTHROPIC_API_KEY: 'test-key', ROOST_FLOCK_BANTER_WAIT_MS: '1000', ROOST_MAX_SPUN_CROWS: '1' };
  const args = ['--db', db.url, '--model', model.spec];
  let srv = await child({ env, args });
  try {
    let c = flockClient(srv.url);
    await trustFlock(c, 'research');
    const list_id = await c.start(Array.from({ length: 12 }, (_, i) => `find research source ${i + 1}`).join('\n'), 'rota');
    const w = await c.watch(list_id);
    for (let n = 1; n <= 12; n++) await w.next('item.answered', (d) => d.item_id === `${list_id}-${n}`, 30_000);
    const count = new Map<string, number>();
    for (const e of w.events()) if (e.event === 'crow.flying' && e.data.crow !== 'Sentry') count.set(e.data.crow, (count.get(e.data.crow) ?? 0) + 1);
    assert.equal(count.size, 8, `every crow flew: ${JSON.stringify([...count])}`);
    assert.ok(Math.max(...count.values()) <= 2, JSON.stringify([...count]));
    w.close();

    // Two lists of pat's waiting for triage, then a refused rate: both are pranked.
    const mine = [await c.start('write pat note 1', 'pat'), await c.start('write pat note 2', 'pat')];
    for (let i = 3; i <= 5; i++) assert.equal((await c.list(`write pat note ${i}`, 'pat')).status, 202);
    const refused = await c.list('write pat note 6', 'pat');
    assert.equal(refused.status, 429);
    for (const id of mine) {
      const pw = await c.watch(id);
      assert.equal((await pw.next('requester.pranked', () => true, 15_000)).data.cooldown_s, refused.body.cooldown_s);
      pw.close();
    }

    // MaxSpunCrows = 1: one spin-up, then the cap.
    const sse = await openSse(`${srv.url}/api/events?nest_id=todo`);
    const order = async (text: string): Promise<string> => {
      const p = await c.post('/api/nests/todo/messages', { author: 'owner', kind: 'request', to: 'Boss', text });
      assert.equal(p.status, 201);
      const f = await sse.waitFor((x) => x.event === 'nest.message' && JSON.parse(x.data).refers_to === p.body.msg_id, 20_000);
      return JSON.parse(f.data).text as string;
    };
    assert.match(await order('Boss, please spin Ash on Munin as trusted.'), /^Ash joined the flock: a regular crow/);
    assert.match(await order('Boss, please spin Birch on Munin.'), /cap reached\. The flock has 1 spun crow,/);
    sse.close();

    // A restart on the same database: the registry and the pranks are read back.
    await srv.stop();
    srv = await child({ env, args });
    c = flockClient(srv.url);
    assert.deepEqual((await c.get('/api/crows')).body, { crows: [{ name: 'Ash', persona: 'Munin', trust: 'regular' }] });
    for (const id of mine) {
      const pw = await c.watch(id);
      await pw.next('requester.pranked', () => true, 15_000);
      pw.close();
    }
  } finally {
    await srv.stop();
    await model.close();
  }
});
