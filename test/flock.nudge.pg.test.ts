// Nudges across nodes (issue 36 point 4): two `roost serve` processes on one
// PostgreSQL database, no model, the expectation set short. Both run the
// expectation tracker; a crow that leaves a request addressed to it
// unanswered gets exactly one nudge, whichever node posts it (the post is
// keyed per nest, request and crow), and both nodes serve the same record.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { child, type ChildServer } from './support/server.js';
import { flockClient } from './support/flock-client.js';
import { until } from './support/until.js';
import { need } from './support/env.js';
import { PG_URL, freshSchema, pgReachable } from './support/pg.js';

type Rec = Record<string, any>;
const EXPECT_MS = 1500;

const reachable = await pgReachable();
const db = freshSchema('roost_flock_nudge');
after(async () => {
  if (reachable) await db.drop();
});

test('two nodes on one PostgreSQL: one nudge per crow per request, whichever node posts it', { timeout: 180_000 }, async (t) => {
  if (!need(t, reachable, `PostgreSQL is not reachable at ${PG_URL}`)) return;
  const env = { ROOST_FLOCK_NUDGE_MS: String(EXPECT_MS) };
  const args = ['--db', db.url];
  const nodes: ChildServer[] = await Promise.all([child({ env, args }), child({ env, args })]);
  try {
    const [a, b] = nodes.map((n) => flockClient(n.url));
    const req = await a.post('/api/nests/todo/messages', { author: 'owner', kind: 'request', to: 'Hugin', text: 'Please summarise the release notes.' });
    assert.equal(req.status, 201, JSON.stringify(req.body));
    const nudges = async (c: typeof a) => ((await c.get('/api/nests/todo/messages')).body as Rec[]).filter((r) => r.kind === 'nudge');
    const [first] = await until('the nudge on the other node', async () => { const n = await nudges(b); return n.length ? n : null; }, 60_000);
    assert.deepEqual([first.author, first.to, first.refers_to, first.tagged_by], ['harness', 'Hugin', req.body.msg_id, 'jev']);
    // Both trackers have had several expectations' time: still one, the same on both nodes.
    await new Promise((r) => setTimeout(r, 3 * EXPECT_MS));
    assert.deepEqual((await nudges(a)).map((r) => r.msg_id), [first.msg_id]);
    assert.deepEqual((await nudges(b)).map((r) => r.msg_id), [first.msg_id]);
  } finally {
    await Promise.all(nodes.map((n) => n.stop()));
  }
});
