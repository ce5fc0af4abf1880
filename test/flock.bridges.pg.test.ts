// Bridge presence across nodes (docs/scale-out.md, docs/flock.md "Code
// items"): two `roost serve --model ...` processes on one PostgreSQL
// database, a bridge following the thread `default` on one of them. Every
// node knows it: the board on the other node counts it, and the flock sends
// a code item to its board whichever node drives the list; the bridge on its
// node gets the start request. Once the bridge goes, every node knows that
// at once (its node says goodbye), and the next code item is a model crow's.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { child, type ChildServer } from './support/server.js';
import { flockModel } from './support/flock-model.js';
import { flockClient } from './support/flock-client.js';
import { openSse } from './support/sse.js';
import { need } from './support/env.js';
import { until } from './support/until.js';
import { PG_URL, freshSchema, pgReachable } from './support/pg.js';

const reachable = await pgReachable();
const db = freshSchema('roost_flock_bridges');
after(async () => {
  if (reachable) await db.drop();
});

/** How many bridges the board of `default` counts, as a node answers. */
async function bridgesOn(url: string): Promise<number> {
  return ((await (await fetch(url + '/fleet/default')).json()) as { bridges: number }).bridges;
}

/** The node that drives the flock (holds its lease), as a server reports it. */
async function driver(url: string): Promise<string> {
  return ((await (await fetch(url + '/api/flock')).json()) as { driver: string }).driver;
}

test('a bridge on one node: every node counts it, and the flock driven on the other sends code items to its board', { timeout: 180_000 }, async (t) => {
  if (!need(t, reachable, `PostgreSQL is not reachable at ${PG_URL}`)) return;
  const model = await flockModel('anthropic');
  // A long expiry: what this test sees of a bridge's going is its node's goodbye, not a timeout.
  const env = { ANTHROPIC_API_KEY: 'test-key', ROOST_FLOCK_BANTER_WAIT_MS: '1000', ROOST_PRESENCE_EXPIRE_MS: '120000' };
  const args = ['--db', db.url, '--model', model.spec];
  const nodes: ChildServer[] = await Promise.all([child({ env, args }), child({ env, args })]);
  const closers: (() => void)[] = [];
  try {
    // A list makes a node take the flock's lease; the bridge follows its board on the other node.
    const list_id = await flockClient(nodes[0].url).start('fix the code of the login redirect', 'ann');
    const holderName = await until('a lease holder both nodes name', async () => {
      const [a, b] = await Promise.all(nodes.map((n) => driver(n.url)));
      return a && a === b ? a : undefined;
    }, 30_000, 25);
    const holder = nodes.find((n) => holderName.includes(`-${n.proc.pid}-`));
    assert.ok(holder, `the lease is held by one of the two nodes (${holderName})`);
    const other = nodes.find((n) => n !== holder)!;
    assert.equal(await bridgesOn(holder.url), 0);
    const bridge = await openSse(`${other.url}/fleet/default/stream`, { 'roost-client': 'bridge' });
    closers.push(() => bridge.close());
    await until('the driving node to count the bridge on the other', async () => (await bridgesOn(holder.url)) === 1, 20_000, 25);

    const c = flockClient(holder.url);
    const w = await c.watch(list_id);
    closers.push(() => w.close());
    const item = `${list_id}-1`;
    assert.equal((await w.next('item.triaged', (d) => d.item_id === item, 30_000)).data.task_type, 'code');
    assert.equal((await c.verdict(item, 'triage', true)).status, 204);
    const flying = (await w.next('crow.flying', (d) => d.item_id === item && d.crow !== 'Sentry', 30_000)).data;
    assert.equal(flying.board?.thread, 'default', `a code flight to the bridge's board: ${JSON.stringify(flying)}`);
    // The bridge, on its own node, is asked to start the session.
    const asked = await bridge.waitFor((f) => f.event === 'event' && JSON.parse(f.data).event?.type === 'request.start', 30_000);
    assert.equal(JSON.parse(asked.data).event.id, flying.board.session);

    // The bridge goes: every node knows at once (its node's goodbye, well before the expiry).
    bridge.close();
    await until('the driving node to count no bridge', async () => (await bridgesOn(holder.url)) === 0, 20_000, 25);
    const next = await c.start('fix the code of the logout link', 'ann');
    const w2 = await c.watch(next);
    closers.push(() => w2.close());
    await w2.next('item.triaged', (d) => d.item_id === `${next}-1`, 30_000);
    assert.equal((await c.verdict(`${next}-1`, 'triage', true)).status, 204);
    const model2 = (await w2.next('crow.flying', (d) => d.item_id === `${next}-1` && d.crow !== 'Sentry', 30_000)).data;
    assert.equal(model2.board, undefined, 'no bridge anywhere: a model crow flies it');
  } finally {
    for (const close of closers) close();
    for (const n of nodes) await n.stop('SIGKILL');
    await model.close();
  }
});
