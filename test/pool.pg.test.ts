// `?pool=N` in the database URL (docs/scale-out.md): the node's pool holds at
// most N connections, whatever the load; a bad N stops the start with a message.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { PostgresStore } from '../src/storage/postgres.js';
import { need } from './support/env.js';
import { PG_URL, freshSchema, pgReachable, sql } from './support/pg.js';

const reachable = await pgReachable();
const db = freshSchema('roost_pool', null); // the pool's own test: no cap in the URL
after(async () => {
  if (reachable) await db.drop();
});

test('?pool=2 caps the connections one node opens for its reads and writes; ?pool=0 and ?pool=x are refused', async (t) => {
  if (!need(t, reachable, `PostgreSQL is not reachable at ${PG_URL}`)) return;
  for (const bad of ['0', '101', 'x', '1.5']) await assert.rejects(PostgresStore.open(`${db.url}&pool=${bad}`), new RegExp(`pool "${bad.replace('.', '\\.')}" must be a whole number from 1 to 100`));
  const store = await PostgresStore.open(`${db.url}&pool=2`);
  try {
    // Many appends to many streams and reads at once: the pool never grows past 2.
    await Promise.all(Array.from({ length: 40 }, (_, i) => store.append(`s${i % 8}`, [{ type: 't', body: '{}' }]).then(() => store.read(`s${i % 8}`, 0, 10))));
    const rows = await sql<{ n: string }>(`SELECT count(*)::text AS n FROM pg_stat_activity WHERE application_name = $1`, [`roost:${db.schema}`]);
    // The pool's connections, plus the one that only LISTENs.
    assert.ok(Number(rows[0].n) <= 3, `${rows[0].n} connections of this node`);
    assert.equal((await store.read('s0', 0, 100)).length, 5);
  } finally {
    await store.close();
  }
});
