// test/keys.upgrade.http.test.ts on PostgreSQL: a key an older server wrote by
// hand (`<stream>:<key>` in the stream's namespace) is recognised by a retry
// sent to the new server, on a node sharing the database.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PostgresStore } from '../src/storage/postgres.js';
import { startRoost } from '../src/server/index.js';
import { need } from './support/env.js';
import { PG_URL, freshSchema, pgReachable } from './support/pg.js';

const reachable = await pgReachable();

async function keyed(url: string, path: string, body: unknown, key: string): Promise<{ status: number; json: any }> {
  const r = await fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify(body) });
  return { status: r.status, json: await r.json() };
}

test('pg: keys an older server wrote by hand are recognised by a retry after the upgrade', { timeout: 60_000 }, async (t) => {
  if (!need(t, reachable, `PostgreSQL is not reachable at ${PG_URL}`)) return;
  const db = freshSchema('roost_keys');
  try {
    const old = await PostgresStore.open(db.url);
    const floor = await old.append('floor', [{ type: 'join', body: JSON.stringify({ type: 'join', agent: 'old-agent', ts: 1 }) }], { idempotencyKey: 'floor:K-floor' });
    const spawn = { type: 'session.spawn', id: 's1', session: 'one', flavor: 'plain', root: '~/one' };
    const board = await old.append('sessions:t', [{ type: spawn.type, body: JSON.stringify({ ...spawn, ts: 1 }) }], { idempotencyKey: 'sessions:t:K-fleet' });
    await old.close();
    const node = await startRoost(await PostgresStore.open(db.url), { port: 0 });
    try {
      const f = await keyed(node.url, '/events', { type: 'join', agent: 'old-agent' }, 'K-floor');
      assert.deepEqual([f.status, f.json.first, f.json.duplicate], [200, floor.first, true], JSON.stringify(f.json));
      const s = await keyed(node.url, '/fleet/t', spawn, 'K-fleet');
      assert.deepEqual([s.status, s.json.first, s.json.duplicate], [200, board.first, true], JSON.stringify(s.json));
      assert.equal(await node.store.head('floor'), floor.last, 'nothing stored twice');
      assert.equal(await node.store.head('sessions:t'), board.last, 'nothing stored twice');
    } finally {
      await node.close();
    }
  } finally {
    await db.drop();
  }
});
