// The fleet board on two nodes sharing one PostgreSQL: a member on node B
// sees what the bridge posted on node A, live and in /sessions, and a decision
// made on A settles the approval for a member deciding on B (409, not a flip).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PostgresStore } from '../src/storage/postgres.js';
import { startRoost, type Roost } from '../src/server/index.js';
import { need } from './support/env.js';
import { PG_URL, freshSchema, pgReachable } from './support/pg.js';
import { openSse } from './support/sse.js';

const reachable = await pgReachable();

async function send(node: Roost, body: unknown, as: string): Promise<{ status: number; json: any }> {
  const r = await fetch(`${node.url}/fleet/team`, { method: 'POST', headers: { 'content-type': 'application/json', 'roost-name': as }, body: JSON.stringify(body) });
  return { status: r.status, json: await r.json() };
}

async function board(node: Roost): Promise<any> {
  return (await fetch(`${node.url}/fleet/team`)).json();
}

test('two nodes, one board: live frames cross nodes and the first decision wins across them', { timeout: 60_000 }, async (t) => {
  if (!need(t, reachable, `PostgreSQL is not reachable at ${PG_URL}`)) return;
  const db = freshSchema('roost_sessions');
  const nodes: Roost[] = [];
  try {
    const [a, b] = await Promise.all([0, 1].map(async () => startRoost(await PostgresStore.open(db.url), { port: 0 })));
    nodes.push(a, b);
    const watchB = await openSse(`${b.url}/fleet/team/stream`);
    await watchB.waitFor((f) => f.event === 'snapshot');

    assert.equal((await send(a, { type: 'session.spawn', id: 's1', session: 'fix-login', root: 'r' }, 'Claude')).status, 200);
    assert.equal((await send(a, { type: 'session.approval', id: 's1', rid: 'a1', tool: 'git push', state: 'pending' }, 'Claude')).status, 200);
    // B's member sees the request live, then answers on B; A's member answers later on A.
    const req = await watchB.waitFor((f) => f.event === 'event' && JSON.parse(f.data).event.type === 'session.approval', 10_000);
    assert.deepEqual(JSON.parse(req.data).chat, { text: '[fix-login] needs approval to run git push', action: false });
    assert.equal((await send(b, { type: 'session.approval', id: 's1', rid: 'a1', state: 'allowed' }, 'Ana')).status, 200);
    const late = await send(a, { type: 'session.approval', id: 's1', rid: 'a1', state: 'denied' }, 'Bob');
    assert.deepEqual([late.status, late.json.message], [409, 'approval "a1" was already allowed by Ana']);

    const [ba, bb] = [await board(a), await board(b)];
    assert.deepEqual(ba.sessions, bb.sessions, 'both nodes fold the same board');
    assert.equal(ba.position, 3);
    assert.deepEqual(bb.sessions[0].approvals, [{ rid: 'a1', tool: 'git push', digest: '', state: 'allowed', by: 'Ana' }]);
    watchB.close();
  } finally {
    for (const n of nodes) await n.close();
    await db.drop();
  }
});

test('two nodes: a board request held by a bridge on A is decided through /approvals on B, echoed once; the bridge gone from A, it is withdrawn within 2 s', { timeout: 60_000 }, async (t) => {
  if (!need(t, reachable, `PostgreSQL is not reachable at ${PG_URL}`)) return;
  const db = freshSchema('roost_sessions_one');
  const nodes: Roost[] = [];
  const BRIDGE = { 'content-type': 'application/json', 'roost-name': 'Claude', 'roost-client': 'bridge', 'roost-bridge': 'p0123456789' };
  const post = (node: Roost, body: unknown) => fetch(`${node.url}/fleet/team`, { method: 'POST', headers: BRIDGE, body: JSON.stringify(body) });
  const pending = async (node: Roost, rid: string) => ((await (await fetch(`${node.url}/approvals?recent=100`)).json()) as { pending: any[] }).pending.find((x) => x.scope.rid === rid);
  try {
    const [a, b] = await Promise.all([0, 1].map(async () => startRoost(await PostgresStore.open(db.url), { port: 0 })));
    nodes.push(a, b);
    const follow = await openSse(`${a.url}/fleet/team/stream`, BRIDGE);
    await follow.waitFor((f) => f.event === 'snapshot');
    assert.equal((await post(a, { type: 'session.spawn', id: 's1', session: 'fix-login', root: 'r' })).status, 200);
    assert.equal((await post(a, { type: 'session.approval', id: 's1', rid: 'a1', tool: 'git push', state: 'pending' })).status, 200);
    // B folds the request from the log; the bridge's hold on A reaches B on the store's broadcast (not withdrawn).
    let x = undefined as any;
    for (let i = 0; i < 100 && !x; i++) {
      x = await pending(b, 'a1');
      if (!x) await new Promise((r) => setTimeout(r, 50));
    }
    assert.ok(x, 'node B lists the request');
    await new Promise((r) => setTimeout(r, 1500));
    const ok = await fetch(`${b.url}/approvals/${x.id}/decision`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ decision: 'allow', by: 'Ana' }) });
    assert.equal(ok.status, 200, await ok.text());
    const echo = await follow.waitFor((f) => f.event === 'event' && JSON.parse(f.data).event.state === 'allowed', 10_000);
    assert.equal(JSON.parse(echo.data).event.name, 'Ana', "the bridge's stream on A carries B's decision");
    await new Promise((r) => setTimeout(r, 300));
    const echoes = ((await board(a)) as { position: number }).position;
    assert.equal(echoes, 3, 'the echo is stored once, whichever nodes wrote it');
    // A second request; the bridge goes away from A: B withdraws it within 2 s.
    assert.equal((await post(a, { type: 'session.approval', id: 's1', rid: 'a2', tool: 'rm', state: 'pending' })).status, 200);
    const y = await pending(a, 'a2');
    const t0 = performance.now();
    follow.close();
    let gone = undefined as any;
    while (!gone && performance.now() - t0 < 3000) {
      gone = ((await (await fetch(`${b.url}/approvals?recent=100`)).json()) as { recent: any[] }).recent.find((r) => r.id === y.id && r.status === 'withdrawn');
      if (!gone) await new Promise((r) => setTimeout(r, 25));
    }
    const ms = performance.now() - t0;
    console.log(`# two nodes: bridge gone from A -> withdrawn (seen on B) in ${ms.toFixed(0)} ms`);
    assert.ok(gone && ms < 2000, `withdrawn within 2 s (${ms.toFixed(0)} ms)`);
    assert.equal((await fetch(`${b.url}/approvals/${y.id}/decision`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ decision: 'allow' }) })).status, 409);
  } finally {
    for (const n of nodes) await n.close();
    await db.drop();
  }
});
