// Work on two nodes sharing one PostgreSQL: commands sent to both nodes at
// once queue in the one order the database decides, the same on both; a
// Space registered on one node is served by the other, and its feed, its
// executions and the result cross nodes live.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PostgresStore } from '../src/storage/postgres.js';
import { startRoost, type Roost } from '../src/server/index.js';
import { need } from './support/env.js';
import { PG_URL, freshSchema, pgReachable } from './support/pg.js';
import { openSse } from './support/sse.js';
import { TestAccess, client, workServer } from './support/work-server.js';
import { workContractCases } from './support/work-contract.js';
import { tempDir } from './support/server.js';

const reachable = await pgReachable();

/** Two nodes sharing a fresh schema, a client of each, and a Space "box" registered on A; both closed and the schema dropped after `run`. */
async function twoNodes(run: (n: { a: Roost; b: Roost; A: ReturnType<typeof client>; B: ReturnType<typeof client>; space: string }) => Promise<void>): Promise<void> {
  const db = freshSchema('roost_work');
  const nodes: Roost[] = [];
  try {
    const [a, b] = await Promise.all([0, 1].map(async () => startRoost(await PostgresStore.open(db.url), { port: 0 })));
    nodes.push(a, b);
    const A = client(a.url, null);
    const B = client(b.url, null);
    const space = (await A.post('/api/v2/spaces', { name: 'box' })).json.id;
    await run({ a, b, A, B, space });
  } finally {
    for (const n of nodes) await n.close();
    await db.drop();
  }
}

test('two nodes, one Work project: FIFO order decided by the database, Space and results across nodes', { timeout: 60_000 }, async (t) => {
  if (!need(t, reachable, `PostgreSQL is not reachable at ${PG_URL}`)) return;
  await twoNodes(async ({ a, b, A, B, space }) => {
    assert.equal((await B.post('/api/v2/projects/default/spaces', { space })).status, 200, 'node B knows a Space registered on A');
    const rep = await A.post(`/api/v2/spaces/${space}/agents`, { full: true, agents: [{ session: 's1', origin: 'bridge' }] });
    assert.equal(rep.status, 200, JSON.stringify(rep.json));
    const agent = `${space}:s1`;
    const watchA = await openSse(`${a.url}/api/v2/events?project=default`);
    await watchA.waitFor((f) => f.event === 'snapshot');
    const sent = await Promise.all(Array.from({ length: 16 }, (_, i) => (i % 2 ? A : B).post('/api/v2/commands', { project: 'default', agent, text: `job ${i}` })));
    for (const r of sent) assert.equal(r.status, 200, JSON.stringify(r.json));
    const order = [...sent].sort((x, y) => x.json.position - y.json.position).map((r) => r.json.id);
    for (const n of [A, B]) {
      let q: string[] = [];
      for (let i = 0; i < 50 && q.length !== 16; i++) {
        q = (await n.get(`/api/v2/agents/${encodeURIComponent(agent)}?project=default`)).json.item.queue;
        if (q.length !== 16) await new Promise((r) => setTimeout(r, 100));
      }
      assert.deepEqual(q, order, 'the same queue on both nodes, in log order');
    }
    // The Space follows its feed on B, runs the head, reports on B; A's stream sees the result.
    const feed = await openSse(`${b.url}/api/v2/spaces/${space}/commands`);
    const due = JSON.parse((await feed.waitFor((f) => f.event === 'commands' && JSON.parse(f.data).commands.length === 1, 10_000)).data).commands[0];
    assert.equal(due.id, order[0]);
    assert.equal((await B.post(`/api/v2/spaces/${space}/executions`, { command: due.id, event: 'started' })).status, 200);
    assert.equal((await A.post(`/api/v2/spaces/${space}/executions`, { command: order[1], event: 'started' })).status, 409, 'one at a time, across nodes');
    assert.equal((await B.post(`/api/v2/spaces/${space}/executions`, { command: due.id, event: 'finished', result: 'ok from B' })).status, 200);
    await watchA.waitFor((f) => f.event === 'result.changed' && JSON.parse(f.data).id === `r-${due.id}`, 10_000);
    assert.equal((await A.get(`/api/v2/results/r-${due.id}?project=default`)).json.item.text, 'ok from B');
    const next = JSON.parse((await feed.waitFor((f) => f.event === 'commands' && JSON.parse(f.data).commands[0]?.id === order[1], 10_000)).data).commands[0];
    assert.match(next.text, /^job \d+$/, 'the next in line is due once the first finished');
    feed.close();
    watchA.close();
  });
});

test('two nodes: a blocked report on one node is checked against the board request the bridge posted on the other a moment before', { timeout: 60_000 }, async (t) => {
  if (!need(t, reachable, `PostgreSQL is not reachable at ${PG_URL}`)) return;
  await twoNodes(async ({ A, B, space }) => {
    assert.equal((await A.post('/api/v2/projects/default/spaces', { space })).status, 200);
    assert.equal((await A.post(`/api/v2/spaces/${space}/agents`, { project: 'default', full: true, agents: [{ session: 's1', origin: 'bridge' }] })).status, 200);
    assert.equal((await A.post('/fleet/ops', { type: 'session.spawn', id: 'job', session: 'job', flavor: 'plain' })).status, 200);
    // B has the board loaded (it only waits for a wake-up), and knows the command.
    assert.equal((await B.get('/fleet/ops')).status, 200);
    const cmd = await A.post('/api/v2/commands', { project: 'default', agent: `${space}:s1`, text: 'push' });
    assert.equal((await B.post(`/api/v2/spaces/${space}/executions`, { command: cmd.json.id, event: 'started' })).status, 200);
    for (let i = 0; i < 5; i++) {
      const rid = `toolu_${i}`;
      // The bridge's board post is answered by A; its Work report goes to B at once.
      assert.equal((await A.post('/fleet/ops', { type: 'session.approval', id: 'job', rid, tool: 'Bash', digest: `$ git push #${i}`, state: 'pending' })).status, 200);
      const lie = await B.post(`/api/v2/spaces/${space}/executions`, { command: cmd.json.id, event: 'blocked', reason: 'r', approval: { thread: 'ops', session: 'job', rid, tool: 'Bash', digest: '$ ls' } });
      assert.equal(lie.status, 409, JSON.stringify(lie.json));
      const r = await B.post(`/api/v2/spaces/${space}/executions`, { command: cmd.json.id, event: 'blocked', reason: 'r', approval: { thread: 'ops', session: 'job', rid, tool: 'Bash', digest: `$ git push #${i}` } });
      assert.equal(r.status, 200, `the request posted on A is seen by B: ${JSON.stringify(r.json)}`);
      assert.equal((await B.get(`/api/v2/executions/x-${cmd.json.id}?project=default`)).json.item.approval.digest, `$ git push #${i}`);
    }
  });
});

// The contract's words, point by point (issue 16), on PostgreSQL: the cases work.http.test.ts runs on SQLite.
workContractCases(
  'PostgreSQL',
  async (access) => {
    const db = freshSchema('roost_workc');
    const s = await workServer(access, ['alpha', 'beta'], tempDir(), () => PostgresStore.open(db.url));
    return { ...s, close: async () => (await s.close(), await db.drop()) };
  },
  (t) => need(t, reachable, `PostgreSQL is not reachable at ${PG_URL}`),
);

test('two nodes hear the same membership change: it is stored once (the key is the change and the head it was judged at)', { timeout: 60_000 }, async (t) => {
  if (!need(t, reachable, `PostgreSQL is not reachable at ${PG_URL}`)) return;
  const db = freshSchema('roost_workm');
  const access = new TestAccess().person('ann', 'Ann').person('bob', 'Bob');
  access.setRole('alpha', 'ann', 'owner');
  access.setRole('alpha', 'bob', 'editor');
  const nodes = await Promise.all([0, 1].map(() => workServer(access, ['alpha'], tempDir(), () => PostgresStore.open(db.url))));
  try {
    const changes = async () => (await nodes[0].store.read('work:alpha', 0)).map((e) => JSON.parse(e.body)).filter((e) => e.type === 'member.changed');
    assert.deepEqual((await changes()).map((e) => [e.uid, e.role]).sort(), [['ann', 'owner'], ['bob', 'editor']], 'both nodes started: each member once');
    for (const [role, n] of [['viewer', 3], [null, 4]] as const) {
      access.setRole('alpha', 'bob', role, 'ann');
      await Promise.all(nodes.map((s) => s.work.syncMembers('alpha', { uid: 'roost', name: 'Roost' }, 'bob')));
      assert.equal((await changes()).length, n, `bob ${String(role)}: stored once`);
    }
  } finally {
    for (const s of nodes) await s.close();
    await db.drop();
  }
});
