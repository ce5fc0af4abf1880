// Two `roost serve` processes on one PostgreSQL database, as behind a load
// balancer: writers spread over both, subscribers on both. What a user relies
// on: every subscriber sees every acknowledged event exactly once and in the
// same order whichever node it is on; moving to the other node with
// Last-Event-ID resumes exactly; killing a node loses nothing it acknowledged.
// And Work presence is the same on every node: who is connected to the other
// node shows, and goes when they leave or their node dies.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openStore } from '../src/storage/index.js';
import { createOwner } from '../src/cli/owner.js';
import { child, post, tempDir, type ChildServer } from './support/server.js';
import { openSse, type SseFrame, type SseReader } from './support/sse.js';
import { need } from './support/env.js';
import { PG_URL, freshSchema, pgReachable, sql } from './support/pg.js';

const reachable = await pgReachable();

const pos = (f: SseFrame) => Number(f.id!.slice(f.id!.lastIndexOf(':') + 1));
/** The live frames (not the snapshot), as comparable lines. */
const lines = (frames: SseFrame[], upTo: number) =>
  frames.filter((f) => f.event !== 'snapshot' && pos(f) <= upTo).map((f) => `${f.id} ${f.event} ${f.data}`);
/** The agent/activity pairs of the posted events a frame list carries. */
const posted = (frames: SseFrame[]) =>
  frames
    .filter((f) => f.event === 'event')
    .map((f) => JSON.parse(f.data).event)
    .filter((e) => e.type === 'status')
    .map((e) => `${e.agent}/${e.activity}`);

async function waitUntil(what: string, ok: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function lastPos(r: SseReader): number {
  for (let i = r.frames.length - 1; i >= 0; i--) if (r.frames[i].id) return pos(r.frames[i]);
  return 0;
}

describe('several nodes on one PostgreSQL', { timeout: 120_000 }, () => {
  const db = freshSchema('roost_multinode');
  let a: ChildServer;
  let b: ChildServer;
  const extra: ChildServer[] = [];
  const readers: SseReader[] = [];

  before(async () => {
    if (!reachable) return;
    // Both nodes start at the same moment: the migrations must still run once.
    [a, b] = await Promise.all([child({ args: ['--db', db.url] }), child({ args: ['--db', db.url] })]);
  });
  after(async () => {
    for (const r of readers) r.close();
    for (const s of [a, b, ...extra]) await s?.stop('SIGKILL');
    if (reachable) await db.drop();
  });

  test('16 writers over two nodes: every subscriber on either node sees every acknowledged event once, in one order; a subscriber moves nodes with Last-Event-ID', async (t) => {
    if (!need(t, reachable, `PostgreSQL is not reachable at ${PG_URL}`)) return;
    const subs = await Promise.all([a, a, b, b].map((n) => openSse(n.url + '/stream')));
    readers.push(...subs);
    const mover = await openSse(a.url + '/stream');
    readers.push(mover);
    for (const s of [...subs, mover]) {
      const snap = await s.waitFor((f) => f.event === 'snapshot');
      assert.equal(pos(snap), 0, 'subscribers start from an empty floor');
    }

    const PER_WRITER = 30;
    const acked: { key: string; last: number }[] = [];
    const writers = Promise.all(Array.from({ length: 16 }, async (_, w) => {
      const node = w % 2 ? a : b;
      for (let n = 0; n < PER_WRITER; n++) {
        const r = await post(node.url, { type: 'status', agent: `w${w}`, activity: `n=${n}` });
        assert.equal(r.status, 200, JSON.stringify(r.json));
        acked.push({ key: `w${w}/n=${n}`, last: r.json.last });
      }
    }));
    // Meanwhile the mover leaves node A part-way through and resumes on node B.
    await mover.waitFor((f) => f.event === 'event' && pos(f) >= 120, 20_000);
    mover.close();
    await mover.ended;
    const fromA = [...mover.frames];
    const resumeAt = fromA[fromA.length - 1].id!;
    const moved = await openSse(b.url + '/stream', { 'last-event-id': resumeAt });
    readers.push(moved);
    await writers;

    const total = 16 * PER_WRITER;
    assert.equal(acked.length, total);
    const top = Math.max(...acked.map((x) => x.last));
    assert.equal(top, total, 'positions are gap-free across both nodes');
    await waitUntil('every subscriber to reach the last acknowledged position', () => [...subs, moved].every((s) => lastPos(s) >= top));

    const reference = lines(subs[0].frames, top);
    assert.equal(reference.length, total);
    assert.deepEqual(
      reference.map((l) => Number(l.slice(l.indexOf(':') + 1, l.indexOf(' ')))),
      Array.from({ length: total }, (_, i) => i + 1),
      'ids are 1..n in order, none twice',
    );
    for (const [i, s] of subs.entries()) assert.deepEqual(lines(s.frames, top), reference, `subscriber ${i} (node ${i < 2 ? 'A' : 'B'}) saw the same frames`);
    const seen = posted(subs[0].frames);
    assert.deepEqual([...seen].sort(), acked.map((x) => x.key).sort(), 'every acknowledged event exactly once');

    assert.notEqual(moved.frames[0]?.event, 'snapshot', 'node B resumed the mover instead of starting it over');
    assert.deepEqual(lines([...fromA, ...moved.frames], top), reference, 'the mover missed nothing and saw nothing twice');
  });

  test('resuming on a node that has not yet heard of the last event still resumes, with no reset', async (t) => {
    if (!need(t, reachable, `PostgreSQL is not reachable at ${PG_URL}`)) return;
    const epoch = (await (await fetch(a.url + '/state')).json()).epoch as string;
    for (let i = 0; i < 10; i++) {
      // The client saw this event on A and moves to B at once, possibly before A's wake-up reaches B.
      const r = await post(a.url, { type: 'status', agent: 'hop', activity: `seen=${i}` });
      assert.equal(r.status, 200);
      const s = await openSse(b.url + '/stream', { 'last-event-id': `${epoch}:${r.json.last}` });
      readers.push(s);
      const next = await post(a.url, { type: 'status', agent: 'hop', activity: `next=${i}` });
      const f = await s.waitFor(() => true);
      s.close();
      assert.equal(f.event, 'event', `hop ${i}: B answered with ${f.event} instead of the next event`);
      assert.equal(pos(f), next.json.last);
      assert.equal(JSON.parse(f.data).event.activity, `next=${i}`);
    }
  });

  test('SIGKILL one node under load: every acknowledged event is in the log, once; the survivor streams them all', async (t) => {
    if (!need(t, reachable, `PostgreSQL is not reachable at ${PG_URL}`)) return;
    const start = Number((await (await fetch(b.url + '/health')).json()).position);
    const watcher = await openSse(b.url + '/stream');
    readers.push(watcher);
    await watcher.waitFor((f) => f.event === 'snapshot');
    const acked = new Set<string>();
    let killed = false;
    const PER_WRITER = 25;
    // A writer retries on the other node with the same Idempotency-Key when its
    // node stops answering, as a client behind a load balancer would.
    const writers = Promise.all(Array.from({ length: 16 }, async (_, w) => {
      let node = w % 2 ? a : b;
      for (let n = 0; n < PER_WRITER; n++) {
        const key = `kill-w${w}-${n}`;
        for (let attempt = 0; ; attempt++) {
          let r: Awaited<ReturnType<typeof post>>;
          try {
            r = await post(node.url, { type: 'status', agent: `k${w}`, activity: `n=${n}` }, { 'idempotency-key': key });
          } catch (e) {
            // No answer (the node is gone): not acknowledged, so retry elsewhere.
            if (!killed || attempt > 3) throw e;
            node = b;
            continue;
          }
          assert.equal(r.status, 200, JSON.stringify(r.json));
          acked.add(`k${w}/n=${n}`);
          break;
        }
      }
    }));
    await waitUntil('load to be under way', () => acked.size >= 120);
    killed = true;
    await a.stop('SIGKILL');
    await writers;
    assert.equal(acked.size, 16 * PER_WRITER);

    const rows = await sql<{ body: string }>(`SELECT body FROM "${db.schema}".events WHERE stream = 'floor' AND position > $1 ORDER BY position`, [start]);
    const logged = rows.map((r) => JSON.parse(r.body)).filter((e) => e.type === 'status').map((e) => `${e.agent}/${e.activity}`);
    assert.deepEqual([...logged].sort(), [...acked].sort(), 'every acknowledged event is in the log exactly once');

    const head = Number((await sql<{ head: string }>(`SELECT head FROM "${db.schema}".streams WHERE stream = 'floor'`))[0].head);
    await waitUntil('the survivor to stream everything', () => lastPos(watcher) >= head);
    assert.deepEqual([...posted(watcher.frames)].sort(), [...acked].sort(), 'the survivor streamed each of them once');

    // The killed node comes back and catches up from the log.
    const again = await child({ args: ['--db', db.url] });
    extra.push(again);
    const health = await (await fetch(again.url + '/health')).json();
    assert.equal(health.position, head, 'a restarted node starts at the head of the shared log');
    assert.equal(health.store, 'postgres');
  });
});

/** The nodes of the presence tests forget a silent node after 4 s instead of 30 s (repeats every 1.3 s). */
const PRESENCE_EXPIRE_MS = 4000;
const PRESENCE_ENV = { ROOST_PRESENCE_EXPIRE_MS: String(PRESENCE_EXPIRE_MS) };

describe('Work presence across nodes (shared mode)', { timeout: 150_000 }, () => {
  const db = freshSchema('roost_presence');
  let a: ChildServer;
  let b: ChildServer;
  let c: ChildServer;
  const readers: SseReader[] = [];
  /** Ann's tab on node A, open through every test. */
  let annOnA: SseReader;
  const ann: Record<string, string> = {};
  const bob: Record<string, string> = {};

  const login = async (url: string, who: string) => {
    const r = await fetch(url + '/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: who, password: `${who}-password` }) });
    return { status: r.status, cookie: /roost_session=[^;]+/.exec(r.headers.get('set-cookie') ?? '')?.[0] ?? '' };
  };
  /** A person's Work tab on a node: the project's events stream (which is what counts as present). */
  const tab = async (node: ChildServer, cookie: Record<string, string>) => {
    const r = await openSse(`${node.url}/api/v2/events?project=default`, cookie);
    readers.push(r);
    return r;
  };
  /** The names in the newest `presence` frame a tab received. */
  const shown = (r: SseReader): string => {
    for (let i = r.frames.length - 1; i >= 0; i--) if (r.frames[i].event === 'presence') return JSON.parse(r.frames[i].data).people.map((p: { name: string }) => p.name).join(', ');
    return '(none yet)';
  };
  /** Who `GET /api/v2/me?project=default` says is present, as seen from `node`. */
  const present = async (node: ChildServer, cookie: Record<string, string>): Promise<string> => {
    const r = await fetch(`${node.url}/api/v2/me?project=default`, { headers: cookie });
    assert.equal(r.status, 200);
    return ((await r.json()).present as { name: string }[]).map((p) => p.name).join(', ');
  };
  const until = async (what: string, ok: () => boolean | Promise<boolean>, ms: number): Promise<number> => {
    const t0 = Date.now();
    while (!(await ok())) {
      if (Date.now() - t0 > ms) assert.fail(`timed out after ${ms} ms waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return Date.now() - t0;
  };

  before(async () => {
    if (!reachable) return;
    // An account in the database puts every node in shared mode: two people, two identities.
    const store = await openStore({ db: db.url, dataDir: tempDir() });
    await createOwner(store, 'ann', 'ann-password', 'Ann');
    await store.close();
    [a, b] = await Promise.all([child({ args: ['--db', db.url], env: PRESENCE_ENV }), child({ args: ['--db', db.url], env: PRESENCE_ENV })]);
    ann.cookie = (await login(a.url, 'ann')).cookie;
    const made = await fetch(a.url + '/users', {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: a.url, ...ann },
      body: JSON.stringify({ login: 'bob', name: 'Bob', password: 'bob-password', project: 'default', role: 'editor' }),
    });
    assert.equal(made.status, 201);
    await until('node B to know bob', async () => {
      const r = await login(b.url, 'bob');
      bob.cookie = r.cookie;
      return r.status === 200;
    }, 10_000);
  });
  after(async () => {
    for (const r of readers) r.close();
    for (const s of [a, b, c]) await s?.stop('SIGKILL');
    if (reachable) await db.drop();
  });

  test('Ann on node A and Bob on node B each see both within a couple of seconds; whoever leaves disappears from the other node', async (t) => {
    if (!need(t, reachable, `PostgreSQL is not reachable at ${PG_URL}`)) return;
    annOnA = await tab(a, ann);
    const bobOnB = await tab(b, bob);
    const took = await until('both tabs to show Ann and Bob', () => shown(annOnA) === 'Ann, Bob' && shown(bobOnB) === 'Ann, Bob', 2000).catch((e) => {
      throw new Error(`${e.message}: A shows ${shown(annOnA)}, B shows ${shown(bobOnB)}`);
    });
    t.diagnostic(`both present on both nodes after ${took} ms`);
    assert.equal(await present(a, ann), 'Ann, Bob', 'GET /me on A');
    assert.equal(await present(b, bob), 'Ann, Bob', 'GET /me on B');

    // Ann opens a second tab, on B: still one Ann everywhere.
    const annOnB = await tab(b, ann);
    await annOnB.waitFor((f) => f.event === 'presence');
    assert.equal(shown(annOnB), 'Ann, Bob');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(shown(annOnA), 'Ann, Bob', 'a person on both nodes is shown once');
    // She closes it: she is still on A, so still present for Bob.
    annOnB.close();
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(shown(bobOnB), 'Ann, Bob');
    assert.equal(await present(b, bob), 'Ann, Bob');

    // Bob closes his tab on B: Ann's tab on A drops him.
    const t0 = Date.now();
    bobOnB.close();
    await until('Ann on A to see Bob leave', () => shown(annOnA) === 'Ann', 2000);
    t.diagnostic(`Bob's leaving on B reached A in ${Date.now() - t0} ms`);
    assert.equal(await present(a, ann), 'Ann');
  });

  test('a node started later learns at once who is present on the others (without waiting for their next repeat)', async (t) => {
    if (!need(t, reachable, `PostgreSQL is not reachable at ${PG_URL}`)) return;
    await tab(b, bob);
    await until('Ann on A to see Bob back', () => shown(annOnA) === 'Ann, Bob', 2000);
    c = await child({ args: ['--db', db.url], env: PRESENCE_ENV });
    const took = await until('node C to show Ann and Bob', async () => (await present(c, ann)) === 'Ann, Bob', 3000);
    t.diagnostic(`node C knew both ${took} ms after it answered /health`);
  });

  test('a node killed with SIGKILL: the people only it had disappear from the other nodes within the expiry', async (t) => {
    if (!need(t, reachable, `PostgreSQL is not reachable at ${PG_URL}`)) return;
    assert.equal(shown(annOnA), 'Ann, Bob', 'Bob is on B');
    const t0 = Date.now();
    await b.stop('SIGKILL'); // no goodbye: only the silence tells
    await new Promise((r) => setTimeout(r, PRESENCE_EXPIRE_MS / 4));
    assert.equal(shown(annOnA), 'Ann, Bob', 'a node is not forgotten the moment it goes quiet');
    await until('Bob to disappear from A', () => shown(annOnA) === 'Ann', 4 * PRESENCE_EXPIRE_MS);
    const took = Date.now() - t0;
    t.diagnostic(`Bob disappeared from A ${took} ms after node B was killed (expiry ${PRESENCE_EXPIRE_MS} ms)`);
    // Forgotten an expiry after B's last repeat (at most a third of it before it died), give or take the sweep.
    assert.ok(took >= PRESENCE_EXPIRE_MS / 2 && took <= PRESENCE_EXPIRE_MS * 1.5, `gone within the expiry, not before: took ${took} ms`);
    await until('node C to drop Bob too', async () => (await present(c, ann)) === 'Ann', 3000);
  });

  test('a node stopped cleanly (SIGTERM) says goodbye: the people only it had disappear from the others at once', async (t) => {
    if (!need(t, reachable, `PostgreSQL is not reachable at ${PG_URL}`)) return;
    await tab(c, bob);
    await until('Ann on A to see Bob (on C)', () => shown(annOnA) === 'Ann, Bob', 2000);
    const t0 = Date.now();
    await c.stop('SIGTERM');
    await until('Bob to disappear from A', () => shown(annOnA) === 'Ann', 2000);
    t.diagnostic(`gone from A ${Date.now() - t0} ms after SIGTERM to node C`);
  });
});
