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
