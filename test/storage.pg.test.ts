// The storage contract on PostgreSQL, plus what only a shared database has:
// migrations raced by several nodes, the LISTEN connection cut and restored,
// and the NOTIFY payload other nodes rely on.
import { after, afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { PostgresStore } from '../src/storage/postgres.js';
import { BROADCAST_MAX_BYTES, openStore } from '../src/storage/index.js';
import { need } from './support/env.js';
import { PG_URL, freshSchema, pgReachable, sql } from './support/pg.js';
import { LEGACY_KEYS, checkLegacyKeys, storageContract } from './storage.contract.js';

const reachable = await pgReachable();
const why = `PostgreSQL is not reachable at ${PG_URL} (start it, or run .ci/run)`;

if (!reachable) {
  test('storage contract: postgres', (t) => {
    need(t, false, why);
  });
} else {
  const db = freshSchema();
  storageContract('postgres', () => PostgresStore.open(db.url), () => db.drop());

  describe('postgres: several nodes on one database', () => {
    const db2 = freshSchema();
    const stores: PostgresStore[] = [];
    const open = async () => {
      const s = await PostgresStore.open(db2.url);
      stores.push(s);
      return s;
    };
    // Each test's nodes close when it ends (left open to the end, they held dozens of idle connections).
    afterEach(async () => {
      for (const s of stores.splice(0)) await s.close().catch(() => {});
    });
    after(async () => {
      await db2.drop();
    });

    test('nodes starting at the same moment migrate once and agree on the epoch', async () => {
      const nodes = await Promise.all(Array.from({ length: 6 }, open));
      assert.equal(new Set(nodes.map((s) => s.epoch)).size, 1, 'one epoch for all');
      const rows = await sql<{ value: string }>(`SELECT value FROM "${db2.schema}".meta WHERE key = 'schema'`);
      assert.deepEqual(rows, [{ value: '5' }], 'every migration ran, once');
      const tables = await sql<{ n: string }>('SELECT count(*) AS n FROM pg_tables WHERE schemaname = $1', [db2.schema]);
      assert.equal(Number(tables[0].n), 7, 'meta, streams, events, idempotency, snapshots, search_docs, search_heads');
      await nodes[0].append('s', [{ type: 't', body: '{}' }]);
      assert.equal(await nodes[5].head('s'), 1, 'they share one log');
    });

    test('openStore picks PostgreSQL for a postgres:// URL, which says it wakes and reaches other nodes', async () => {
      const s = await openStore({ db: db2.url, dataDir: '/nonexistent' });
      try {
        assert.equal(s.kind, 'postgres');
        assert.equal(s.capabilities.crossNodeWakeups, true);
        assert.equal(s.capabilities.crossNodeBroadcast, true);
      } finally {
        await s.close();
      }
    });

    test('other nodes get NOTIFY <stream>:<head> after the commit, and nothing else', async () => {
      const a = await open();
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      const got: string[] = [];
      c.on('notification', (m) => got.push(m.payload ?? ''));
      await c.query(`LISTEN "${a.channel}"`);
      try {
        const r = await a.append('notify:me', [{ type: 't', body: '{}' }, { type: 't', body: '{}' }]);
        const deadline = Date.now() + 3000;
        while (!got.includes(`notify:me:${r.last}`) && Date.now() < deadline) await new Promise((ok) => setTimeout(ok, 10));
        assert.ok(got.includes(`notify:me:${r.last}`), `payload is stream:head, got ${JSON.stringify(got)}`);
        assert.ok(got.every((p) => /^.+:\d+$/.test(p)), 'no payload carries more than a stream and a position');
      } finally {
        await c.end();
      }
    });

    test('a cut LISTEN connection reconnects and announces what was committed meanwhile', async () => {
      const a = await open();
      const b = await open();
      const heard: number[] = [];
      b.onCommit((stream, head, entries) => {
        if (stream === 'cut' && entries === null) heard.push(head);
      });
      await a.append('cut', [{ type: 't', body: '1' }]);
      const wait = async (what: string, ok: () => boolean) => {
        const deadline = Date.now() + 8000;
        while (!ok()) {
          if (Date.now() > deadline) assert.fail(`timed out: ${what}; heard ${JSON.stringify(heard)}`);
          await new Promise((r) => setTimeout(r, 10));
        }
      };
      await wait('first wake-up', () => heard.includes(1));
      const pid = b.listenerPid;
      assert.ok(pid, 'b is listening');
      await sql('SELECT pg_terminate_backend($1)', [pid]);
      // Committed while b is deaf: no notification reaches b for these.
      await a.append('cut', [{ type: 't', body: '2' }]);
      await a.append('cut', [{ type: 't', body: '3' }]);
      await wait('catch-up after reconnect', () => heard.includes(3) || heard.some((h) => h >= 3));
      assert.notEqual(b.listenerPid, pid, 'a new LISTEN connection');
      assert.ok(b.stats.listenReconnects >= 1);
      // And live wake-ups work again.
      await a.append('cut', [{ type: 't', body: '4' }]);
      await wait('live again', () => heard.includes(4));
      assert.deepEqual([...heard].sort((x, y) => x - y), heard, 'heads are announced in increasing order');
    });

    test('a broadcast rides its own channel, not the commit wake-ups, within NOTIFY\'s 8000 bytes; a cut LISTEN connection hears broadcasts again', async () => {
      const a = await open();
      const b = await open();
      assert.notEqual(a.broadcastChannel, a.channel);
      const raw: string[] = [];
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      c.on('notification', (m) => raw.push(`${m.channel}|${m.payload ?? ''}`));
      await c.query(`LISTEN "${a.channel}"; LISTEN "${a.broadcastChannel}"`);
      const heard: string[] = [];
      const wakeups: string[] = [];
      b.onBroadcast((topic, payload) => heard.push(`${topic} ${payload.length}`));
      b.onCommit((stream) => wakeups.push(stream));
      const wait = async (what: string, ok: () => boolean) => {
        const deadline = Date.now() + 8000;
        while (!ok()) {
          if (Date.now() > deadline) assert.fail(`timed out: ${what}; heard ${JSON.stringify(heard)}`);
          await new Promise((r) => setTimeout(r, 10));
        }
      };
      try {
        // The longest payload, in 4-byte characters, with the longest topic.
        const longest = '𝄞'.repeat(BROADCAST_MAX_BYTES / 4);
        a.broadcast('t'.repeat(64), longest);
        await wait('b hears the longest broadcast', () => heard.includes(`${'t'.repeat(64)} ${longest.length}`));
        await wait('the raw listener sees it', () => raw.some((r) => r.startsWith(a.broadcastChannel + '|')));
        const notified = raw.find((r) => r.startsWith(a.broadcastChannel + '|'))!.slice(a.broadcastChannel.length + 1);
        assert.ok(Buffer.byteLength(notified) < 8000, `the NOTIFY payload is ${Buffer.byteLength(notified)} bytes`);
        assert.ok(!raw.some((r) => r.startsWith(a.channel + '|')), 'no commit wake-up was sent for it');
        assert.ok(!wakeups.length, 'and no commit listener was called');

        const pid = b.listenerPid;
        await sql('SELECT pg_terminate_backend($1)', [pid]);
        await wait('b listens again', () => b.listenerPid !== null && b.listenerPid !== pid);
        a.broadcast('again', 'x');
        await wait('b hears broadcasts again', () => heard.includes('again 1'));
      } finally {
        await c.end();
      }
    });

    test('a commit whose NOTIFY never came (its node died in between) is still announced', async () => {
      const b = await PostgresStore.open(db2.url, { pollEveryMs: 100 });
      stores.push(b);
      const heard: number[] = [];
      b.onCommit((stream, head) => {
        if (stream === 'silent') heard.push(head);
      });
      // What a node that committed and was killed before its NOTIFY leaves behind.
      await sql(`INSERT INTO "${db2.schema}".events (stream, position, type, body, at) VALUES ('silent', 1, 't', '{}', 0)`);
      await sql(`INSERT INTO "${db2.schema}".streams (stream, head) VALUES ('silent', 1)`);
      const deadline = Date.now() + 3000;
      while (!heard.includes(1) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual(heard, [1]);
    });

    test('every commit of this node reaches its search index, though the heads poll reads it before the append returns', async () => {
      // The heads poll (and other nodes' wake-ups) can announce a head before
      // this node's flush hands its entries on; the index then skipped them,
      // its mark stalled, and the next search re-read the log from there.
      const b = await PostgresStore.open(db2.url, { pollEveryMs: 1 });
      stores.push(b);
      const writers = await Promise.all([open(), open()]);
      const body = (i: number) => JSON.stringify({ type: 'tool', agent: `a${i % 7}`, team: 'pay', tool: 'Edit', activity: `Editing refund${i}.ts` });
      const fill = async (s: PostgresStore, stream: string) => {
        for (let i = 0; i < 150; i++) await s.append(stream, Array.from({ length: 20 }, (_, k) => ({ type: 'tool', body: body(i * 20 + k) })));
      };
      // b fills its own stream while two other nodes commit to theirs (their NOTIFYs reach b too).
      await Promise.all([fill(b, 'floor:race'), fill(writers[0], 'floor:race1'), fill(writers[1], 'floor:race2')]);
      await b.close();
      for (const w of writers) await w.close();
      const marks = await sql<{ stream: string; indexed: string; head: string }>(
        `SELECT s.stream, s.head, h.indexed FROM "${db2.schema}".streams s LEFT JOIN "${db2.schema}".search_heads h USING (stream)
         WHERE s.stream LIKE 'floor:race%' ORDER BY s.stream`,
      );
      assert.deepEqual(
        marks.map((m) => [m.stream, Number(m.indexed)]),
        [
          ['floor:race', 3000],
          ['floor:race1', 3000],
          ['floor:race2', 3000],
        ],
        'every event indexed by the node that committed it, the marks at the heads, nothing left for a search to re-read',
      );
    });

    test('one turn of appends is one transaction (group commit)', async () => {
      const a = await open();
      const before = a.stats.flushes;
      await Promise.all(Array.from({ length: 100 }, (_, i) => a.append(`g${i % 3}`, [{ type: 't', body: String(i) }])));
      assert.ok(a.stats.flushes - before <= 2, `100 appends of one turn took ${a.stats.flushes - before} flushes`);
    });

    test('a database of schema 2 (global keys, prefixed by hand) opens, and its keys move into their streams', async () => {
      const old = freshSchema();
      const q = (text: string, values: unknown[] = []) => sql(text.replaceAll('@', `"${old.schema}".`), values);
      const opened: PostgresStore[] = [];
      try {
        // Schema 2 as it shipped.
        await sql(`CREATE SCHEMA "${old.schema}"`);
        await q(`CREATE TABLE @meta (key text PRIMARY KEY, value text NOT NULL)`);
        await q(`INSERT INTO @meta VALUES ('schema', '2'), ('epoch', 'legacy2')`);
        await q(`CREATE TABLE @streams (stream text PRIMARY KEY, head bigint NOT NULL)`);
        await q(`CREATE TABLE @events (stream text NOT NULL, position bigint NOT NULL, type text NOT NULL, body text NOT NULL, at bigint NOT NULL, PRIMARY KEY (stream, position))`);
        await q(`CREATE TABLE @idempotency (key text PRIMARY KEY, stream text NOT NULL, first bigint NOT NULL, last bigint NOT NULL, at bigint NOT NULL)`);
        await q(`CREATE TABLE @snapshots (stream text NOT NULL, position bigint NOT NULL, state text NOT NULL, at bigint NOT NULL, PRIMARY KEY (stream, position))`);
        await q(`CREATE FUNCTION @roost_assert(ok boolean, message text) RETURNS boolean LANGUAGE plpgsql AS $$
           BEGIN IF NOT ok THEN RAISE EXCEPTION '%', message; END IF; RETURN ok; END $$`);
        for (const k of LEGACY_KEYS) {
          for (let p = 1; p <= k.last; p++) await q(`INSERT INTO @events VALUES ($1, $2, 'note', '{"tag":"old"}', 0) ON CONFLICT DO NOTHING`, [k.stream, p]);
          await q(`INSERT INTO @streams VALUES ($1, $2) ON CONFLICT (stream) DO UPDATE SET head = greatest(@streams.head, EXCLUDED.head)`, [k.stream, k.last]);
          await q(`INSERT INTO @idempotency VALUES ($1, $2, $3, $4, 0)`, [k.key, k.stream, k.first, k.last]);
        }
        // Two nodes of the new version start together: one migrates, both work.
        const [s, t] = await Promise.all([PostgresStore.open(old.url), PostgresStore.open(old.url)]);
        opened.push(s, t);
        assert.equal(s.epoch, 'legacy2', 'the epoch survives (live clients keep their cursors)');
        assert.deepEqual(await q(`SELECT value FROM @meta WHERE key = 'schema'`), [{ value: '5' }]);
        await checkLegacyKeys(s);
        assert.deepEqual(await t.append('floor:p', [{ type: 'note', body: '{}' }], { idempotencyKey: 'Q' }), { first: 2, last: 2, duplicate: true });
      } finally {
        for (const s of opened) await s.close();
        await old.drop();
      }
    });

    test('a bad URL or schema name is refused with a clear message', async () => {
      await assert.rejects(PostgresStore.open(`${PG_URL}?schema=Robert"); DROP`), /schema/);
      await assert.rejects(PostgresStore.open('postgres://postgres@127.0.0.1:1/none'), /cannot open PostgreSQL store/);
    });
  });
}
