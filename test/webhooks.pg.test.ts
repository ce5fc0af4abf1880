// Outbound webhooks on several nodes (docs/webhooks.md, "Several nodes"): two
// Roost nodes on one PostgreSQL database both fold every agent's events and
// both try to enqueue each one, yet every delivery is enqueued once (its
// idempotency key) and sent once (only the lease holder sends); when the
// holder stops, the other takes the lease and sends the rest.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { openStore } from '../src/storage/index.js';
import { startRoost, type Roost } from '../src/server/index.js';
import { tempDir } from './support/server.js';
import { until } from './support/until.js';
import { need } from './support/env.js';
import { Receiver } from './support/webhook-receiver.js';
import { PG_URL, freshSchema, pgReachable } from './support/pg.js';

const reachable = await pgReachable();
const db = freshSchema('roost_webhooks');
after(async () => {
  if (reachable) await db.drop();
});

const SECRET = 'a-test-secret-of-enough-length';
const CFG = { port: 0, webhookBackoffMs: 100, webhookLeaseMs: 1500 };

async function node(): Promise<Roost> {
  return startRoost(await openStore({ db: db.url, dataDir: tempDir() }), CFG);
}

async function call(url: string, method: string, body?: unknown): Promise<{ status: number; json: any }> {
  const r = await fetch(url, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const t = await r.text();
  return { status: r.status, json: t ? JSON.parse(t) : null };
}

async function turn(base: string, agent: string): Promise<void> {
  for (const status of ['working', 'done']) assert.ok((await call(base + '/events', 'POST', { type: 'status', agent: { id: agent, name: agent }, status, source: 'test' })).status < 300);
}

test('two nodes on one PostgreSQL: each delivery is enqueued once and sent once, by the lease holder; the other takes over when it stops', { timeout: 120_000 }, async (t) => {
  if (!need(t, reachable, `PostgreSQL is not reachable at ${PG_URL}`)) return;
  const rx = await new Receiver(SECRET).start();
  const a = await node();
  const b = await node();
  const open = new Set([a, b]);
  try {
    assert.equal((await call(a.url + '/webhooks', 'POST', { url: rx.url, kinds: ['session.stopped'], secret: SECRET, allow_private: true })).status, 201);
    await until('node b knows the target', async () => {
      await b.webhooks.fresh();
      return b.webhooks.state.targets.size === 1;
    }, 20_000);
    // Turns end on both nodes; both fold every one of them.
    for (let i = 0; i < 10; i++) await turn(i % 2 ? b.url : a.url, `agent-${i}`);
    await until('ten deliveries', () => rx.got.length >= 10, 30_000);
    // The lease is held while something waits (it may pass between the nodes as the queue drains and fills):
    // either way the two nodes together made one attempt per delivery.
    // A node counts an attempt once its POST has returned, a moment after the receiver has it.
    const attempts = () => a.webhooks.stats.attempts + b.webhooks.stats.attempts;
    await until('both nodes counted their attempts', () => attempts() >= 10, 10_000);
    assert.equal(attempts(), 10, 'one attempt per delivery, over both nodes');
    // A node stops; turns go on at the other, which takes the lease if it did not hold it.
    const holder = a;
    const other = b;
    const before = other.webhooks.stats.attempts;
    await holder.close();
    open.delete(holder);
    for (let i = 10; i < 16; i++) await turn(other.url, `agent-${i}`);
    await until('sixteen deliveries', () => rx.got.length >= 16, 30_000);
    await new Promise((r) => setTimeout(r, 1000)); // room for a duplicate to show
    assert.deepEqual(rx.twice(), [], 'no delivery twice');
    assert.equal(rx.got.length, 16);
    assert.deepEqual(
      rx.got.map((g) => g.json.data.agent),
      Array.from({ length: 16 }, (_, i) => `agent-${i}`),
      'in order',
    );
    await until('the other node counted its attempts', () => other.webhooks.stats.attempts - before >= 6, 10_000);
    assert.equal(other.webhooks.stats.attempts - before, 6, 'the other node sent the rest, once each');
  } finally {
    for (const n of open) await n.close();
    await rx.stop();
  }
});
