// The owner's direct actions on a nest (docs/flock.md, "What the owner does
// directly") on PostgreSQL with two nodes: a rename and a deletion made on one
// node are the state of the other, and stay so after that node restarts (the
// fold from the log, with its snapshot); the deleted nest's messages stay in
// the log and its id stays reserved.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { child, type ChildServer } from './support/server.js';
import { need } from './support/env.js';
import { until } from './support/until.js';
import { PG_URL, freshSchema, pgReachable } from './support/pg.js';

const reachable = await pgReachable();
const db = freshSchema('roost_flock_nest_owner');
after(async () => {
  if (reachable) await db.drop();
});

type Rec = Record<string, any>;
const send = async (url: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Rec }> => {
  const r = await fetch(url + path, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : null };
};
const nests = async (url: string): Promise<Rec[]> => (await send(url, 'GET', '/api/nests')).body.nests;

test('rename and delete on one node: the other node\'s state, also after its restart', { timeout: 240_000 }, async (t) => {
  if (!need(t, reachable, `PostgreSQL is not reachable at ${PG_URL}`)) return;
  const args = ['--db', db.url];
  const nodes: ChildServer[] = await Promise.all([child({ args }), child({ args })]);
  try {
    const [a, b] = nodes;
    for (const name of ['Keep room', 'Gone room']) assert.equal((await send(a.url, 'POST', '/api/nests', { name, crows: ['Hugin'] })).status, 201);
    assert.equal((await send(a.url, 'POST', '/api/nests/gone-room/messages', { author: 'owner', text: 'a message to keep' })).status, 201);
    assert.equal((await send(a.url, 'PUT', '/api/nests/keep-room', { name: 'Kept, renamed' })).status, 200);
    assert.equal((await send(a.url, 'DELETE', '/api/nests/gone-room', { reason: 'done with it' })).status, 200);
    const seen = async (url: string) => {
      const n = await nests(url);
      return n.find((x) => x.nest_id === 'keep-room')?.name === 'Kept, renamed' && !n.some((x) => x.nest_id === 'gone-room');
    };
    await until('node b to fold the rename and the deletion', () => seen(b.url), 30_000);
    assert.equal((await send(b.url, 'GET', '/api/nests/gone-room/messages')).status, 404);
    assert.equal((await send(b.url, 'POST', '/api/nests', { name: 'Gone room', crows: ['Hugin'] })).status, 409, 'its id stays reserved');

    // Node b restarts: the same state from the log.
    await b.stop();
    const b2 = await child({ args, dataDir: b.dataDir });
    nodes[1] = b2;
    assert.ok(await seen(b2.url));
    assert.equal((await send(b2.url, 'POST', '/api/nests', { name: 'Gone room', crows: ['Hugin'] })).status, 409);
    assert.equal((await send(b2.url, 'DELETE', '/api/nests/gone-room', {})).status, 404);
  } finally {
    await Promise.all(nodes.map((n) => n.stop()));
  }
});
