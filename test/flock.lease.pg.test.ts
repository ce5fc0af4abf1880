// The flock's lease across nodes (docs/flock.md, "The lease"): two
// `roost serve --model ...` processes on one PostgreSQL database. A list is
// driven by exactly one of them (each call of the scripted model is made
// once); the lease holder is killed with SIGKILL while crows are in the air,
// and the other node takes the lease once it runs out, flies the open flights
// again and finishes the list: every item answered once, every target judged
// once, every verdict given before the kill kept. With the default lease the
// takeover comes within seconds, not after half a minute (issue 37, point 10:
// 37.5 s with the old 30 s lease; the bench row `lease` measures it).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { child, type ChildServer } from './support/server.js';
import { flockModel } from './support/flock-model.js';
import { flockClient, type ListWatch } from './support/flock-client.js';
import { need } from './support/env.js';
import { PG_URL, freshSchema, pgReachable } from './support/pg.js';

const reachable = await pgReachable();
const db = freshSchema('roost_flock_lease');
after(async () => {
  if (reachable) await db.drop();
});

/** The node (`<host>-<pid>-<id>`) that holds the project's lease, as a server reports it. */
async function driver(url: string): Promise<string> {
  const r = await fetch(url + '/api/flock');
  const body = (await r.json()) as { driver: string };
  return body.driver;
}

test('two nodes on one PostgreSQL: one drives the list; SIGKILL it mid-list and the other finishes it, nothing answered twice, no verdict lost', { timeout: 180_000 }, async (t) => {
  if (!need(t, reachable, `PostgreSQL is not reachable at ${PG_URL}`)) return;
  const model = await flockModel('anthropic', { slowMs: 12_000 });
  // The default lease (no ROOST_FLOCK_LEASE_MS): what a deployment gets.
  const env = { ANTHROPIC_API_KEY: 'test-key', ROOST_FLOCK_BANTER_WAIT_MS: '1000' };
  const args = ['--db', db.url, '--model', model.spec];
  const nodes: ChildServer[] = await Promise.all([child({ env, args }), child({ env, args })]);
  let w: ListWatch | null = null;
  try {
    const [first] = nodes;
    const list_id = await flockClient(first.url).start('slow writing one\nslow writing two\nwriting three', 'ann');
    const items = [1, 2, 3].map((n) => `${list_id}-${n}`);
    // Both nodes name the same holder, one of them.
    let holderName = '';
    for (let i = 0; i < 200 && !holderName; i++) {
      const [a, b] = await Promise.all(nodes.map((n) => driver(n.url)));
      if (a && a === b) holderName = a;
      else await new Promise((r) => setTimeout(r, 25));
    }
    const holder = nodes.find((n) => holderName.includes(`-${n.proc.pid}-`));
    assert.ok(holder, `the lease is held by one of the two nodes (${holderName})`);
    const other = nodes.find((n) => n !== holder)!;
    const c = flockClient(other.url);
    // Watched and judged through the node that does not drive.
    w = await c.watch(list_id);
    for (const item of items) {
      await w.next('item.triaged', (d) => d.item_id === item, 20_000);
      assert.equal((await c.verdict(item, 'triage', true)).status, 204);
    }
    // Item 3 (quick) answered; items 1 and 2 have crows in the air: kill the holder.
    const three = await w.next('item.answered', (d) => d.item_id === items[2], 20_000);
    assert.equal((await c.verdict(items[2], 'output', true)).status, 204);
    await w.next('verdict', (d) => d.item_id === items[2] && d.target === 'output', 10_000);
    const inAir = await Promise.all(items.slice(0, 2).map((item) => w!.next('crow.flying', (d) => d.item_id === item && d.crow !== 'Sentry', 10_000)));
    for (const f of inAir) assert.ok(!w.events().some((e) => e.event === 'crow.landed' && e.data.item_id === f.data.item_id && e.data.crow === f.data.crow), `${f.data.item_id} still in the air`);
    assert.equal(model.asks().filter((x) => x.tool === 'triage').length, 3, 'one node drives: each triage asked once');
    await holder.stop('SIGKILL');
    const killed = Date.now();

    // The other node takes the lease once it runs out, and flies the open flights again.
    for (let i = 0; i < 2400 && !(await driver(other.url)).includes(`-${other.proc.pid}-`); i++) await new Promise((r) => setTimeout(r, 25));
    const took = Date.now() - killed;
    assert.ok((await driver(other.url)).includes(`-${other.proc.pid}-`), 'the surviving node took the lease');
    // Generous for a loaded machine (the target, 5 s, is the bench's): the old 30 s lease took 30 to 40 s.
    assert.ok(took < 15_000, `the surviving node drives ${took} ms after the kill`);
    for (const f of inAir) {
      const landed = await w.next('crow.landed', (d) => d.item_id === f.data.item_id && d.crow === f.data.crow, 30_000);
      assert.equal(landed.data.ok, true);
      await w.next('item.answered', (d) => d.item_id === f.data.item_id, 10_000);
      assert.equal((await c.verdict(f.data.item_id as string, 'output', true)).status, 204);
    }
    assert.equal((await c.verdict(items[0], 'output', true)).status, 404, 'a second answer finds nothing waiting');
    await w.next('list.finished', () => true, 20_000);

    const all = w.events();
    const count = (pred: (e: (typeof all)[number]) => boolean) => all.filter(pred).length;
    for (const item of items) {
      assert.equal(count((e) => e.event === 'item.answered' && e.data.item_id === item), 1, `${item} answered once`);
      assert.equal(count((e) => e.event === 'item.skipped' && e.data.item_id === item), 0, `${item} not skipped`);
      for (const target of ['triage', 'output']) {
        const vs = all.filter((e) => e.event === 'verdict' && e.data.item_id === item && e.data.target === target);
        assert.equal(vs.length, 1, `${item} ${target} judged once`);
        assert.equal(vs[0].data.verdict, 'approved', `${item} ${target}: the person's verdict, kept`);
      }
    }
    assert.equal(three.data.crows.length, 1);
    const flights = all.filter((e) => e.event === 'crow.flying');
    const landings = all.filter((e) => e.event === 'crow.landed');
    assert.equal(landings.length, flights.length, 'every flight landed once');
    assert.equal(new Set(landings.map((e) => `${e.data.item_id}/${e.data.crow}`)).size, landings.length);
    for (const f of inAir) {
      const asked = model.asks().filter((x) => x.tool === null && x.user.startsWith(f.data.item_id === items[0] ? 'slow writing one' : 'slow writing two') && x.system.startsWith(`You are ${f.data.crow},`));
      assert.equal(asked.length, 2, `the flight of ${f.data.item_id} in the air was flown again by the other node, once`);
    }
    assert.equal(model.asks().filter((x) => x.tool === 'triage').length, 3, 'no triage asked again');
  } finally {
    w?.close();
    for (const n of nodes) await n.stop('SIGKILL');
    await model.close();
  }
});
