// Idempotency keys across upgrades (issue 35, item 5): the route layer now
// scopes every key (the stream and its owner) and fingerprints the request;
// before, each caller prefixed the key by hand in its stream's namespace,
// and before that keys were global (schema 1) until the store's key-table
// migration cut their `<stream>:` prefix. A request sent to an older server,
// whose answer was lost, and retried once the new one runs, must still be
// recognised: the first answer, nothing stored twice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { SqliteStore } from '../src/storage/index.js';
import { createOwner } from '../src/cli/owner.js';
import { startRoost } from '../src/server/index.js';
import { inProcess, tempDir } from './support/server.js';

/** A POST with JSON and an Idempotency-Key. */
async function keyed(url: string, path: string, body: unknown, key: string): Promise<{ status: number; json: any }> {
  const r = await fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify(body) });
  const text = await r.text();
  return { status: r.status, json: text ? JSON.parse(text) : null };
}

const event = (e: Record<string, unknown>) => ({ type: String(e.type), body: JSON.stringify({ ...e, ts: 1 }) });

test('keys an older server wrote by hand (`<stream>:<key>` in the stream) are recognised by a retry after the upgrade', async () => {
  const dir = tempDir('roost-keys-upgrade-');
  try {
    // What the older server stored for three requests whose answers were lost.
    const old = new SqliteStore({ path: join(dir, 'roost.db') });
    const floor = await old.append('floor', [event({ type: 'join', agent: 'old-agent' })], { idempotencyKey: 'floor:K-floor' });
    const floorP = await old.append('floor:p', [event({ type: 'join', agent: 'p-agent' })], { idempotencyKey: 'floor:p:K-floor-p' });
    const spawn = { type: 'session.spawn', id: 's1', session: 'one', flavor: 'plain', root: '~/one' };
    const board = await old.append('sessions:t', [event(spawn)], { idempotencyKey: 'sessions:t:K-fleet' });
    await old.close();

    const srv = await inProcess({}, dir);
    try {
      const f = await keyed(srv.url, '/events', { type: 'join', agent: 'old-agent' }, 'K-floor');
      assert.deepEqual([f.status, f.json.first, f.json.last, f.json.duplicate], [200, floor.first, floor.last, true], JSON.stringify(f.json));
      const fp = await keyed(srv.url, '/events?project=p', { type: 'join', agent: 'p-agent' }, 'K-floor-p');
      assert.deepEqual([fp.status, fp.json.first, fp.json.duplicate], [200, floorP.first, true], JSON.stringify(fp.json));
      const s = await keyed(srv.url, '/fleet/t', spawn, 'K-fleet');
      assert.deepEqual([s.status, s.json.first, s.json.duplicate], [200, board.first, true], JSON.stringify(s.json));
      // Nothing was stored twice: one agent on each floor, one session on the board.
      assert.equal(await srv.store.head('floor'), floor.last);
      assert.equal(await srv.store.head('floor:p'), floorP.last);
      assert.equal(await srv.store.head('sessions:t'), board.last);
      // A new key is a new request, stored under the new scheme, and its own retry is recognised.
      const n1 = await keyed(srv.url, '/events', { type: 'join', agent: 'new-agent' }, 'K-new');
      const n2 = await keyed(srv.url, '/events', { type: 'join', agent: 'new-agent' }, 'K-new');
      assert.deepEqual([n1.json.duplicate, n2.json.duplicate, n2.json.first], [false, true, n1.json.first]);
    } finally {
      await srv.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a key of a schema-1 database (global, `floor:<key>`) survives the key-table migration and this one: the retry is a duplicate', async () => {
  const dir = tempDir('roost-keys-schema1-');
  try {
    const db = new Database(join(dir, 'roost.db'));
    db.exec(`CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      INSERT INTO meta VALUES ('schema', '1'), ('epoch', 'legacy1');
      CREATE TABLE events (stream TEXT NOT NULL, position INTEGER NOT NULL, type TEXT NOT NULL, body TEXT NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (stream, position)) WITHOUT ROWID;
      CREATE TABLE idempotency (key TEXT PRIMARY KEY, stream TEXT NOT NULL, first INTEGER NOT NULL, last INTEGER NOT NULL, at INTEGER NOT NULL) WITHOUT ROWID;
      CREATE TABLE snapshots (stream TEXT NOT NULL, position INTEGER NOT NULL, state TEXT NOT NULL, at INTEGER NOT NULL, PRIMARY KEY (stream, position)) WITHOUT ROWID;`);
    db.prepare('INSERT INTO events VALUES (?, ?, ?, ?, 0)').run('floor', 1, 'join', JSON.stringify({ type: 'join', agent: 'ancient', ts: 1 }));
    db.prepare('INSERT INTO idempotency VALUES (?, ?, ?, ?, 0)').run('floor:K-ancient', 'floor', 1, 1);
    db.close();
    const srv = await inProcess({}, dir);
    try {
      const r = await keyed(srv.url, '/events', { type: 'join', agent: 'ancient' }, 'K-ancient');
      assert.deepEqual([r.status, r.json.first, r.json.duplicate], [200, 1, true], JSON.stringify(r.json));
      assert.equal(await srv.store.head('floor'), 1, 'nothing stored twice');
    } finally {
      await srv.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('one key, one request: the same key with another body is refused 422 on a fingerprinted route, and stores nothing; the floor keeps its first answer', async () => {
  const srv = await inProcess();
  try {
    const spawn = { type: 'session.spawn', id: 's2', session: 'two', flavor: 'plain', root: '~/two' };
    const a = await keyed(srv.url, '/fleet/u', spawn, 'K-one');
    assert.equal(a.status, 200, JSON.stringify(a.json));
    // The same body in another key order is the same request.
    const same = await keyed(srv.url, '/fleet/u', Object.fromEntries(Object.entries(spawn).reverse()), 'K-one');
    assert.deepEqual([same.status, same.json.duplicate, same.json.first], [200, true, a.json.first]);
    const other = await keyed(srv.url, '/fleet/u', { ...spawn, id: 's3', session: 'three' }, 'K-one');
    assert.deepEqual([other.status, other.json.kind], [422, 'unprocessable'], JSON.stringify(other.json));
    assert.equal(await srv.store.head('sessions:u'), a.json.last, 'the different request stored nothing');
    // The same key on another board is that board's own (the key's namespace is the stream and its owner).
    assert.equal((await keyed(srv.url, '/fleet/v', spawn, 'K-one')).json.duplicate, false);
    // docs/floor.md: on POST /events a retry with another body still gets the first answer.
    const f1 = await keyed(srv.url, '/events', { type: 'join', agent: 'x1' }, 'K-f');
    const f2 = await keyed(srv.url, '/events', { type: 'join', agent: 'x2' }, 'K-f');
    assert.deepEqual([f2.status, f2.json.duplicate, f2.json.first], [200, true, f1.json.first]);
  } finally {
    await srv.close();
  }
});

test('shared mode: an account request keyed the old way (`identity:projects:<uid>:<key>`) is a duplicate when retried after the upgrade', async () => {
  const dir = tempDir('roost-keys-identity-');
  try {
    const old = new SqliteStore({ path: join(dir, 'roost.db') });
    const { uid } = await createOwner(old, 'ann', 'ann-password', 'Ann');
    // What the older server stored for Ann's POST /projects {id: "p9"} under key K-proj.
    const made = await old.append('identity', [event({ type: 'project.created', id: 'p9', name: 'Nine', by: uid })], { idempotencyKey: `identity:projects:${uid}:K-proj` });
    await old.close();
    const srv = await startRoost(new SqliteStore({ path: join(dir, 'roost.db') }), { port: 0 });
    try {
      const li = await fetch(`${srv.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: 'ann', password: 'ann-password' }) });
      const cookie = /roost_session=[^;]+/.exec(li.headers.get('set-cookie') ?? '')![0];
      const headAfterLogin = await srv.store.head('identity');
      const r = await fetch(`${srv.url}/projects`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': 'K-proj', cookie, origin: srv.url },
        body: JSON.stringify({ id: 'p9', name: 'Nine' }),
      });
      const json = await r.json();
      assert.deepEqual([r.status, json.duplicate, json.project?.id], [201, true, 'p9'], JSON.stringify(json));
      assert.equal(await srv.store.head('identity'), headAfterLogin, 'nothing stored twice');
      assert.ok(headAfterLogin > made.last);
    } finally {
      await srv.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
