// Rules of spec/flock-events.md a contract-only client found doubtful (issue
// 36, points 14, 6 and 7), each written from the contract's words, over real
// HTTP and SSE against the scripted model stand-in (support/flock-model.ts):
// the prank reaches every flying list of its requester; crows are picked
// core-first, rotating, borrowed only when the core cannot take the job, and
// rotate over the whole flock in `todo`; a spun crow's starting trust and the
// registry's cap; split and murder; the Boss in a saturated flock.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { child, inProcess } from './support/server.js';
import { flockModel, type BrainOptions, type FlockModel } from './support/flock-model.js';
import { flockClient, type FlockClient, type ListWatch } from './support/flock-client.js';
import { trustFlock } from './support/flock-trust.js';
import { openSse } from './support/sse.js';
import { until } from './support/until.js';
import type { Roost } from '../src/server/index.js';

type Rec = Record<string, any>;

const WORKERS = ['Hugin', 'Munin', 'Pepper', 'Inky', 'Corvin', 'Sable', 'Tansy', 'Rook'];

/** The worker crows that flew each item of a list (not the Sentry, not the Elder), by item id. */
function workerFlights(w: ListWatch): Map<string, Rec[]> {
  const out = new Map<string, Rec[]>();
  for (const e of w.events()) {
    if (e.event !== 'crow.flying' || e.data.crow === 'Sentry' || e.data.crow === 'Elder') continue;
    const a = out.get(e.data.item_id) ?? [];
    a.push(e.data);
    out.set(e.data.item_id, a);
  }
  return out;
}


describe('the contract, word for word (lists and crows)', () => {
  let model: FlockModel;
  let roost: Roost;
  let c: FlockClient;
  const brain: BrainOptions = {};
  before(async () => {
    model = await flockModel('anthropic', brain);
    roost = await inProcess({ models: model.roster(), flockBanterWaitMs: 500 });
    c = flockClient(roost.url);
    assert.equal((await c.post('/api/nests', { name: 'Desk', crows: ['Pepper', 'Inky'] })).status, 201);
  });
  after(async () => {
    await roost.close();
    await model.close();
  });

  test('"requester.pranked goes to every list of that requester\'s still flying": each list the requester watches gets it, with the 429\'s cooldown_s', async () => {
    // Five lists in a minute, each waiting for its triage verdict (a stranger flock asks): all five still flying.
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await c.start(`write note ${i}`, 'rapid'));
    const watches = await Promise.all(ids.map((id) => c.watch(id)));
    const other = await c.start('write a note for someone else', 'calm');
    const calm = await c.watch(other);
    // The sixth in the minute is refused 429 {message, cooldown_s}: a prank, so every flying list hears it.
    const sixth = await c.list('write note 6', 'rapid');
    assert.equal(sixth.status, 429);
    assert.deepEqual(Object.keys(sixth.body).sort(), ['cooldown_s', 'message']);
    for (const w of watches) {
      const p = await w.next('requester.pranked');
      assert.equal(p.data.cooldown_s, sixth.body.cooldown_s);
      assert.equal(typeof p.data.message, 'string');
    }
    // Two more: the third strike starts the cooldown, pranked again on every flying list.
    assert.equal((await c.list('write note 7', 'rapid')).status, 429);
    const eighth = await c.list('write note 8', 'rapid');
    assert.equal(eighth.status, 429);
    assert.equal(eighth.body.cooldown_s, 60);
    for (const w of watches) {
      await until('three pranks on each list', () => w.events().filter((e) => e.event === 'requester.pranked').length === 3, 10_000);
      assert.equal(w.events().filter((e) => e.event === 'requester.pranked').at(-1)!.data.cooldown_s, 60);
    }
    // While the cooldown runs every flying list has had its prank; the 429s add none.
    assert.equal((await c.list('write note 9', 'rapid')).status, 429);
    await new Promise((r) => setTimeout(r, 300));
    for (const w of watches) assert.equal(w.events().filter((e) => e.event === 'requester.pranked').length, 3);
    // Another requester's list hears nothing.
    assert.equal(calm.events().filter((e) => e.event === 'requester.pranked').length, 0);
    for (const w of [...watches, calm]) w.close();
  });

  test('"in todo ... crows come from the whole flock": twelve solo items of a trusted flock rotate over all eight crows', async () => {
    // A trusted flock's triage is auto: each Sentry landing sends its item's crow at once, twelve in a burst.
    await trustFlock(c, 'research');
    const texts = Array.from({ length: 12 }, (_, i) => `find research source ${i + 1}`);
    const list_id = await c.start(texts.join('\n'), 'rota');
    const w = await c.watch(list_id);
    for (let n = 1; n <= 12; n++) assert.equal((await w.next('item.triaged', (d) => d.item_id === `${list_id}-${n}`)).data.needs_approval, false);
    for (let n = 1; n <= 12; n++) await w.next('item.answered', (d) => d.item_id === `${list_id}-${n}`);
    const flights = [...workerFlights(w).values()].map((f) => f.map((x) => x.crow));
    assert.equal(flights.length, 12);
    for (const f of flights) assert.equal(f.length, 1, 'a solo item flies one crow');
    const count = new Map<string, number>();
    for (const [crow] of flights) count.set(crow, (count.get(crow) ?? 0) + 1);
    assert.deepEqual([...count.keys()].sort(), [...WORKERS].sort(), `every crow flew: ${JSON.stringify([...count])}`);
    assert.ok(Math.max(...count.values()) <= 2, `twelve over eight is at most two each: ${JSON.stringify([...count])}`);
    for (const f of workerFlights(w).values()) assert.equal(f[0].borrowed, false, 'nothing is borrowed in todo');
    for (let n = 1; n <= 12; n++) assert.equal((await c.verdict(`${list_id}-${n}`, 'output', true)).status, 204);
    await w.next('list.finished', () => true, 20_000);
    w.close();
  });

  test('"picked core-first (rotating within the core), then borrowed": a nest\'s solo items go to its idle core, in turn, never borrowed', async () => {
    const texts = Array.from({ length: 6 }, (_, i) => `plan desk step ${i + 1} (planning)`);
    const list_id = await c.start(texts.join('\n'), 'desk', { nest_id: 'desk' });
    const w = await c.watch(list_id);
    // One at a time: each item is answered before the next is approved, so the core is idle each time.
    const order: string[] = [];
    for (let n = 1; n <= 6; n++) {
      await w.next('item.triaged', (d) => d.item_id === `${list_id}-${n}`);
      assert.equal((await c.verdict(`${list_id}-${n}`, 'triage', true)).status, 204);
      const f = await w.next('crow.flying', (d) => d.item_id === `${list_id}-${n}` && d.crow !== 'Sentry');
      assert.equal(f.data.borrowed, false, `item ${n} flew a core crow (${f.data.crow})`);
      order.push(f.data.crow);
      await w.next('item.answered', (d) => d.item_id === `${list_id}-${n}`);
    }
    assert.ok(['Pepper', 'Inky'].includes(order[0]));
    for (let i = 1; i < order.length; i++) assert.notEqual(order[i], order[i - 1], `rotating within the core: ${order.join(', ')}`);
    for (let n = 1; n <= 6; n++) assert.equal((await c.verdict(`${list_id}-${n}`, 'output', true)).status, 204);
    await w.next('list.finished', () => true, 20_000);
    w.close();
  });

  test('borrowed only when the core cannot take the job: items of a trusted flock fill the core (4 flights each) before a crow is borrowed', async () => {
    // Slow answers keep the crows in the air while the next items are planned.
    await trustFlock(c, 'data');
    const texts = Array.from({ length: 10 }, (_, i) => `slow desk data table ${i + 1}`);
    const list_id = await c.start(texts.join('\n'), 'desk2', { nest_id: 'desk' });
    const w = await c.watch(list_id);
    await until('ten flights', () => workerFlights(w).size === 10, 15_000);
    const flights = [...workerFlights(w).values()].map((f) => f[0]);
    const core = flights.filter((f) => f.crow === 'Pepper' || f.crow === 'Inky');
    assert.equal(core.length, 8, `the core takes 4 each first: ${flights.map((f) => f.crow).join(', ')}`);
    assert.equal(core.filter((f) => f.crow === 'Pepper').length, 4);
    for (const f of core) assert.equal(f.borrowed, false);
    const borrowed = flights.filter((f) => f.crow !== 'Pepper' && f.crow !== 'Inky');
    assert.equal(borrowed.length, 2);
    for (const f of borrowed) assert.equal(f.borrowed, true);
    for (let n = 1; n <= 10; n++) await w.next('item.answered', (d) => d.item_id === `${list_id}-${n}`, 20_000);
    for (let n = 1; n <= 10; n++) assert.equal((await c.verdict(`${list_id}-${n}`, 'output', true)).status, 204);
    await w.next('list.finished', () => true, 20_000);
    w.close();
  });

  /** A split item and a murder item of one list: one worker per subtask; several workers, then the Elder's merge. */
  async function splitAndMurder(list_id: string, w: ListWatch, approve: boolean): Promise<void> {
    const [split, murder] = [`${list_id}-1`, `${list_id}-2`];
    const t = await w.next('item.triaged', (d) => d.item_id === split);
    assert.equal(t.data.mode, 'split');
    assert.equal((await w.next('item.triaged', (d) => d.item_id === murder)).data.mode, 'murder');
    if (approve) {
      assert.equal((await c.verdict(split, 'triage', true)).status, 204);
      assert.equal((await c.verdict(murder, 'triage', true)).status, 204);
    }
    const a1 = await w.next('item.answered', (d) => d.item_id === split);
    const a2 = await w.next('item.answered', (d) => d.item_id === murder);
    const s = workerFlights(w).get(split)!;
    assert.equal(s.length, t.data.subtasks.length, 'one worker per subtask');
    assert.deepEqual(s.map((f) => f.subtask).sort(), [1, 2]);
    assert.equal(new Set(s.map((f) => f.crow)).size, s.length, 'each a different crow');
    assert.deepEqual([...a1.data.crows].sort(), s.map((f) => f.crow).sort());
    const m = workerFlights(w).get(murder)!;
    assert.ok(m.length >= 2, 'several workers');
    assert.equal(new Set(m.map((f) => f.crow)).size, m.length);
    const elder = w.events().filter((e) => e.data.item_id === murder && e.data.crow === 'Elder');
    assert.deepEqual(elder.map((e) => e.event), ['crow.flying', 'crow.landed'], 'the Elder merged');
    const lastWorkerLanding = w.events().reduce((last, e, i) => (e.event === 'crow.landed' && e.data.item_id === murder && e.data.crow !== 'Elder' && e.data.crow !== 'Sentry' ? i : last), -1);
    assert.ok(w.events().findIndex((e) => e.event === 'crow.flying' && e.data.item_id === murder && e.data.crow === 'Elder') > lastWorkerLanding, 'the Elder flies once every worker landed');
    assert.match(a2.data.answer, /^merged: /);
    assert.deepEqual([...a2.data.crows].sort(), m.map((f) => f.crow).sort());
    assert.equal((await c.verdict(split, 'output', true)).status, 204);
    assert.equal((await c.verdict(murder, 'output', true)).status, 204);
    await w.next('list.finished', () => true, 20_000);
    w.close();
  }

  test('"a split ... one crow per subtask"; "a murder" several crows merged by the Elder (triage approved, then auto)', async () => {
    const text = 'split the launch review\nmurder a review of the tagline';
    const first = await c.start(text, 'modes');
    await splitAndMurder(first, await c.watch(first), true);
    // Trusted at review, the Sentry's landing sends the crows itself.
    await trustFlock(c, 'review');
    const second = await c.start(text, 'modes');
    await splitAndMurder(second, await c.watch(second), false);
  });

  test('"a spun crow\'s starting trust is clamped to regular at most": asked stranger is stranger, regular is regular, trusted is regular; the registry fills to its cap, then refuses', async () => {
    const sse = await openSse(`${roost.url}/api/events?nest_id=todo`);
    const order = async (text: string): Promise<Rec> => {
      const r = await c.post('/api/nests/todo/messages', { author: 'owner', kind: 'request', to: 'Boss', text });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      const f = await sse.waitFor((x) => x.event === 'nest.message' && JSON.parse(x.data).refers_to === r.body.msg_id, 10_000);
      return JSON.parse(f.data) as Rec;
    };
    const asked: [string, string, string][] = [
      ['Ash', 'stranger', 'stranger'],
      ['Birch', 'regular', 'regular'],
      ['Cedar', 'trusted', 'regular'],
      ['Dune', 'regular', 'regular'],
      ['Elm', 'stranger', 'stranger'],
      ['Fern', 'trusted', 'regular'],
      ['Gale', 'regular', 'regular'],
      ['Heath', 'stranger', 'stranger'],
    ];
    // Asked all at once: every one of them joins (the registry fills to its cap) at the level asked, clamped.
    const says = await Promise.all(asked.map(([name, trust]) => order(`Boss, please spin ${name} on Munin as ${trust}.`)));
    for (const [i, [name, , want]] of asked.entries()) assert.match(says[i].text, new RegExp(`^${name} joined the flock: a ${want} crow`));
    const crows = (await c.get('/api/crows')).body.crows as Rec[];
    assert.equal(crows.length, 8, 'the registry filled to its cap');
    for (const [name, , want] of asked) assert.equal(crows.find((x) => x.name === name)?.trust, want, name);
    // The ledger's starting levels say the same.
    const starting = (await c.get('/api/trust')).body.starting as Rec[];
    for (const [name, , want] of asked) assert.equal(starting.find((x) => x.holder === name)?.level, want === 'regular' ? 1 : 0, name);
    assert.match((await order('Boss, please spin Ivy on Munin as regular.')).text, /cap reached/);
    assert.equal((await c.get('/api/crows')).body.crows.length, 8);
    sse.close();
  });
});

describe('settings by the contract\'s names (the built CLI)', () => {
  let model: FlockModel;
  before(async () => {
    model = await flockModel('openai');
  });
  after(() => model.close());

  test('CROWS_JEV_THRESHOLD is an alias of ROOST_JEV_BAND; ROOST_MAX_SPUN_CROWS sets MaxSpunCrows', async () => {
    const srv = await child({ env: { ROOST_MODEL: model.spec, CROWS_JEV_THRESHOLD: '0.9', ROOST_MAX_SPUN_CROWS: '2' } });
    try {
      const c = flockClient(srv.url);
      assert.equal((await c.get('/api/nests')).body.watchdog.band, 0.9, "the watchdog's band is the threshold");
      const sse = await openSse(`${srv.url}/api/events?nest_id=todo`);
      const order = async (text: string): Promise<string> => {
        const p = await c.post('/api/nests/todo/messages', { author: 'owner', kind: 'request', to: 'Boss', text });
        assert.equal(p.status, 201, JSON.stringify(p.body));
        const f = await sse.waitFor((x) => x.event === 'nest.message' && JSON.parse(x.data).refers_to === p.body.msg_id, 15_000);
        return JSON.parse(f.data).text as string;
      };
      assert.match(await order('Boss, please spin Ash on Munin as regular.'), /^Ash joined/);
      assert.match(await order('Boss, please spin Birch on Munin as regular.'), /^Birch joined/);
      assert.match(await order('Boss, please spin Cedar on Munin as regular.'), /^No new crow: cap reached\. The flock has 2 spun crows/);
      assert.equal((await c.get('/api/crows')).body.crows.length, 2);
      sse.close();
    } finally {
      await srv.stop();
    }
    // Both names set and disagreeing: the start refuses, naming both.
    await assert.rejects(child({ env: { ROOST_MODEL: model.spec, CROWS_JEV_THRESHOLD: '0.9', ROOST_JEV_BAND: '0.85' } }), /ROOST_JEV_BAND \(0\.85\) and its alias CROWS_JEV_THRESHOLD \(0\.9\) disagree/);
  });
});
