// The storage contract: what every EventStore backend must do, as tests.
// A backend's test file calls `storageContract(name, open, cleanup)`, where
// every `open()` returns a new store instance on the same database (so a test
// can reopen, or run two instances side by side as two nodes would). Tests use
// their own stream names and keys, so they never see each other's events.
//
// Tests that only make sense for stores shared by several processes are gated
// on `capabilities.crossNodeWakeups` (or `crossNodeBroadcast`), not on the
// backend's name.

import { after, afterEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { searchContract } from './storage.search-contract.js';
import { BROADCAST_MAX_BYTES, StoreError, type AppendResult, type EventStore, type LogEntry, type NewEvent, type StoreErrorKind } from '../src/storage/types.js';

const ev = (tag: string | number, type = 'note'): NewEvent => ({ type, body: JSON.stringify({ tag }) });
const tick = () => new Promise<void>((r) => setImmediate(r));
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Waits until `check` holds, or fails with `what` after `ms`. */
async function eventually(what: string, check: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting: ${what}`);
    await sleep(10);
  }
}

/** Resolves with the promise's outcome, or fails the test if it has none within `ms`: nothing a caller awaits may hang. */
async function settles<T>(what: string, p: Promise<T>, ms = 5000): Promise<PromiseSettledResult<T>> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`hung for ${ms} ms: ${what}`)), ms);
  });
  try {
    return await Promise.race([Promise.allSettled([p]).then((r) => r[0]), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Asserts that `p` rejects with a StoreError of `kind`. */
async function rejectsWith(p: Promise<unknown>, kind: StoreErrorKind, message?: RegExp): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof StoreError, `a StoreError, got ${String(e)}`);
    assert.equal(e.kind, kind, `kind ${kind}, got ${e.kind}: ${e.message}`);
    if (message) assert.match(e.message, message);
    return true;
  });
}

/** The positions each append got are exactly 1..n between them, with no overlap. */
function assertTiling(results: AppendResult[], sizes: number[]): void {
  const ranges = results.map((r, i) => {
    assert.equal(r.duplicate, false);
    assert.equal(r.last - r.first + 1, sizes[i], 'an append got as many positions as it had events');
    return [r.first, r.last] as const;
  });
  ranges.sort((a, b) => a[0] - b[0]);
  let next = 1;
  for (const [first, last] of ranges) {
    assert.equal(first, next, 'positions have no gap and no overlap');
    next = last + 1;
  }
}

export function storageContract(name: string, open: () => Promise<EventStore>, cleanup?: () => Promise<void>): void {
  describe(`storage contract: ${name}`, () => {
    const open_: EventStore[] = [];
    const run = randomUUID().slice(0, 8);
    let n = 0;
    /** A stream name no other test (or earlier run on the same database) uses. */
    const fresh = (label: string) => `${label}-${run}-${++n}`;
    const store = async () => {
      const s = await open();
      open_.push(s);
      return s;
    };
    // Each test's stores close when it ends: kept open to the end of the suite,
    // the PostgreSQL ones held about a hundred idle connections (every one a
    // pool and a LISTEN connection), which the server's other test files need.
    // (The search tests share one store, closed at the end.)
    afterEach(async () => {
      for (const s of open_.splice(0)) await s.close().catch(() => {});
    });
    const shared: EventStore[] = [];
    after(async () => {
      for (const s of shared) await s.close().catch(() => {});
      await cleanup?.();
    });

    test('positions start at 1, have no gaps, and each stream counts on its own', async () => {
      const s = await store();
      const a = fresh('a');
      const b = fresh('b');
      assert.equal(await s.head(a), 0, 'an unknown stream has head 0');
      assert.deepEqual(await s.read(a, 0), []);
      assert.deepEqual(await s.append(a, [ev(1)]), { first: 1, last: 1, duplicate: false });
      assert.deepEqual(await s.append(a, [ev(2), ev(3), ev(4)]), { first: 2, last: 4, duplicate: false });
      assert.deepEqual(await s.append(b, [ev('b1')]), { first: 1, last: 1, duplicate: false });
      assert.deepEqual(await s.append(a, [ev(5)]), { first: 5, last: 5, duplicate: false });
      assert.equal(await s.head(a), 5);
      assert.equal(await s.head(b), 1);
      const all = await s.read(a, 0);
      assert.deepEqual(
        all.map((e) => [e.stream, e.position, e.type, JSON.parse(e.body).tag]),
        [1, 2, 3, 4, 5].map((i) => [a, i, 'note', i]),
      );
      for (const e of all) assert.ok(Math.abs(e.at - Date.now()) < 60_000, 'entries carry the server time of the append');
    });

    test('bodies and types come back byte for byte', async () => {
      const s = await store();
      const st = fresh('bytes');
      const body = JSON.stringify({ text: 'ünïcödé ✈ "quotes" \\ back\nslash', n: 1.5e300, nested: { a: [1, null, true] } });
      await s.append(st, [{ type: 'weird.type-1', body }]);
      const [e] = await s.read(st, 0);
      assert.equal(e.body, body);
      assert.equal(e.type, 'weird.type-1');
      // Names and keys with quotes, backslashes and other scripts are data, never SQL.
      const odd = fresh(`o'brien\\"; DROP TABLE events; --ünï`);
      const key = `it's\\a "key" ✈ ${run}`;
      assert.deepEqual(await s.append(odd, [ev(1)], { idempotencyKey: key }), { first: 1, last: 1, duplicate: false });
      assert.deepEqual(await s.append(odd, [ev(2)], { idempotencyKey: key }), { first: 1, last: 1, duplicate: true });
      assert.deepEqual((await s.read(odd, 0)).map((x) => x.stream), [odd]);
      assert.equal(await s.head(odd), 1);
      assert.equal(await s.head(st), 1, 'the other tables are still there');
    });

    test('a batch is all or nothing: a failing append stores nothing and leaves the head, and does not sink its neighbours', async () => {
      const s = await store();
      const st = fresh('atomic');
      await s.append(st, [ev(1)]);
      // The second event has no body: the backend must refuse the whole request.
      const bad = s.append(st, [ev(2), { type: 'note', body: undefined as unknown as string }]);
      const good = s.append(st, [ev('ok')]); // same turn: same group commit
      await assert.rejects(bad);
      assert.deepEqual(await good, { first: 2, last: 2, duplicate: false }, 'the good request of the same turn commits, right after the head');
      assert.equal(await s.head(st), 2);
      assert.deepEqual(
        (await s.read(st, 0)).map((e) => JSON.parse(e.body).tag),
        [1, 'ok'],
        'nothing of the failed batch is stored',
      );
      assert.deepEqual(await s.append(st, [ev(3)]), { first: 3, last: 3, duplicate: false }, 'positions go on without a gap after a failure');
      await assert.rejects(s.append(st, []), 'an empty append is refused');
      assert.equal(await s.head(st), 3);
      // A bad request among keyed ones (new key, repeated key) in one turn: the keys still hold.
      const k1 = `k-${run}-${++n}`;
      const k2 = `k-${run}-${++n}`;
      await s.append(st, [ev(4)], { idempotencyKey: k1 });
      const turn = [
        s.append(st, [ev('k1 again')], { idempotencyKey: k1 }),
        s.append(st, [{ type: 'note', body: undefined as unknown as string }]),
        s.append(st, [ev(5)], { idempotencyKey: k2 }),
        s.append(st, [ev('k2 again')], { idempotencyKey: k2 }),
        s.append(fresh('atomic-other'), [ev('other stream')]),
      ];
      const settled = await Promise.allSettled(turn);
      assert.deepEqual(
        settled.map((r) => (r.status === 'fulfilled' ? r.value : 'rejected')),
        [
          { first: 4, last: 4, duplicate: true },
          'rejected',
          { first: 5, last: 5, duplicate: false },
          { first: 5, last: 5, duplicate: true },
          { first: 1, last: 1, duplicate: false },
        ],
      );
      assert.deepEqual((await s.read(st, 3)).map((e) => JSON.parse(e.body).tag), [4, 5]);
    });

    test('read returns entries after a position, ascending, at most limit', async () => {
      const s = await store();
      const st = fresh('read');
      await s.append(st, Array.from({ length: 30 }, (_, i) => ev(i + 1)));
      const page = await s.read(st, 10, 5);
      assert.deepEqual(page.map((e) => e.position), [11, 12, 13, 14, 15]);
      assert.deepEqual((await s.read(st, 27)).map((e) => e.position), [28, 29, 30]);
      assert.deepEqual(await s.read(st, 30), []);
      assert.deepEqual(await s.read(st, 500), []);
      // Paging through with the last position seen gives everything once, in order.
      const seen: number[] = [];
      for (let after = 0; ; ) {
        const b = await s.read(st, after, 7);
        if (b.length === 0) break;
        seen.push(...b.map((e) => e.position));
        after = b[b.length - 1].position;
      }
      assert.deepEqual(seen, Array.from({ length: 30 }, (_, i) => i + 1));
    });

    test('an idempotency key returns the original positions, marked duplicate, and stores nothing', async () => {
      const s = await store();
      const st = fresh('idem');
      const key = `k-${run}-${++n}`;
      await s.append(st, [ev(0)]);
      const first = await s.append(st, [ev(1), ev(2)], { idempotencyKey: key });
      assert.deepEqual(first, { first: 2, last: 3, duplicate: false });
      const again = await s.append(st, [ev('other'), ev('payload'), ev('ignored')], { idempotencyKey: key });
      assert.deepEqual(again, { first: 2, last: 3, duplicate: true });
      assert.equal(await s.head(st), 3, 'a duplicate stores nothing');
      // The same key twice in one turn (one group commit): one write, one duplicate.
      const key2 = `k-${run}-${++n}`;
      const [x, y] = await Promise.all([s.append(st, [ev('x')], { idempotencyKey: key2 }), s.append(st, [ev('y')], { idempotencyKey: key2 })]);
      assert.deepEqual(x, { first: 4, last: 4, duplicate: false });
      assert.deepEqual(y, { first: 4, last: 4, duplicate: true });
      assert.deepEqual((await s.read(st, 0)).map((e) => JSON.parse(e.body).tag), [0, 1, 2, 'x']);
      // A key whose append failed was never used: a retry with it writes.
      const key3 = `k-${run}-${++n}`;
      await assert.rejects(s.append(st, [{ type: 'note', body: undefined as unknown as string }], { idempotencyKey: key3 }));
      assert.deepEqual(await s.append(st, [ev('retry')], { idempotencyKey: key3 }), { first: 5, last: 5, duplicate: false });
    });

    test('a key belongs to its stream: the same key on two streams stores both, each answered in its own stream', async () => {
      const s = await store();
      const a = fresh('key-a');
      const b = fresh('key-b');
      const key = `k-${run}-${++n}`;
      await s.append(b, [ev('b0'), ev('b1')]); // b's head differs from a's, so a foreign answer would show
      assert.deepEqual(await s.append(a, [ev('a')], { idempotencyKey: key }), { first: 1, last: 1, duplicate: false });
      assert.deepEqual(await s.append(b, [ev('b')], { idempotencyKey: key }), { first: 3, last: 3, duplicate: false }, 'stored, not the duplicate of a');
      assert.deepEqual(await s.append(a, [ev('a again')], { idempotencyKey: key }), { first: 1, last: 1, duplicate: true });
      assert.deepEqual(await s.append(b, [ev('b again')], { idempotencyKey: key }), { first: 3, last: 3, duplicate: true });
      // A key that looks like another stream's prefixed key is only a key (the old hand-made prefixes).
      const c = fresh('key-c');
      assert.deepEqual(await s.append(c, [ev('c')], { idempotencyKey: `${a}:${key}` }), { first: 1, last: 1, duplicate: false });
      assert.deepEqual((await s.read(a, 0)).map((e) => JSON.parse(e.body).tag), ['a']);
      assert.deepEqual((await s.read(b, 0)).map((e) => JSON.parse(e.body).tag), ['b0', 'b1', 'b']);
      // The same in one turn (one group commit).
      const k2 = `k-${run}-${++n}`;
      const [x, y, z] = await Promise.all([
        s.append(a, [ev('x')], { idempotencyKey: k2 }),
        s.append(b, [ev('y')], { idempotencyKey: k2 }),
        s.append(a, [ev('x again')], { idempotencyKey: k2 }),
      ]);
      assert.deepEqual([x, y, z], [
        { first: 2, last: 2, duplicate: false },
        { first: 4, last: 4, duplicate: false },
        { first: 2, last: 2, duplicate: true },
      ]);
    });

    test('the same key with another fingerprint is refused (conflict) and stores nothing; the same fingerprint is a duplicate', async () => {
      const s = await store();
      const st = fresh('fp');
      const key = `k-${run}-${++n}`;
      assert.deepEqual(await s.append(st, [ev(1)], { idempotencyKey: key, fingerprint: 'POST /x alice #1' }), { first: 1, last: 1, duplicate: false });
      await rejectsWith(s.append(st, [ev('other body')], { idempotencyKey: key, fingerprint: 'POST /x alice #2' }), 'conflict', /different request/);
      assert.deepEqual(await s.append(st, [ev('retry')], { idempotencyKey: key, fingerprint: 'POST /x alice #1' }), { first: 1, last: 1, duplicate: true });
      // A caller that gives no fingerprint is not checked (internal keys such as an expiry's).
      assert.deepEqual(await s.append(st, [ev('unchecked')], { idempotencyKey: key }), { first: 1, last: 1, duplicate: true });
      const bare = `k-${run}-${++n}`;
      await s.append(st, [ev(2)], { idempotencyKey: bare });
      assert.deepEqual(await s.append(st, [ev('x')], { idempotencyKey: bare, fingerprint: 'anything' }), { first: 2, last: 2, duplicate: true });
      // The refused one kept nothing: not its events, not its fingerprint (the key keeps its first meaning).
      await rejectsWith(s.append(st, [ev('again')], { idempotencyKey: key, fingerprint: 'POST /x alice #2' }), 'conflict');
      assert.deepEqual((await s.read(st, 0)).map((e) => JSON.parse(e.body).tag), [1, 2]);
      assert.equal(await s.head(st), 2);
      // In one turn: the first writes, a retry is a duplicate, a different request is refused, and neighbours commit.
      const k2 = `k-${run}-${++n}`;
      const settled = await Promise.allSettled([
        s.append(st, [ev('first')], { idempotencyKey: k2, fingerprint: 'A' }),
        s.append(st, [ev('different')], { idempotencyKey: k2, fingerprint: 'B' }),
        s.append(st, [ev('retry')], { idempotencyKey: k2, fingerprint: 'A' }),
        s.append(st, [ev('neighbour')]),
      ]);
      assert.deepEqual(
        settled.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as StoreError).kind)),
        [{ first: 3, last: 3, duplicate: false }, 'conflict', { first: 3, last: 3, duplicate: true }, { first: 4, last: 4, duplicate: false }],
      );
      assert.deepEqual((await s.read(st, 2)).map((e) => JSON.parse(e.body).tag), ['first', 'neighbour']);
    });

    test('a scope: one key across streams; a duplicate is never answered from another stream, and nothing hangs', async () => {
      const s = await store();
      const a = fresh('scope-a');
      const b = fresh('scope-b');
      const key = `k-${run}-${++n}`;
      const alice = `alice-${run}`;
      const bob = `bob-${run}`;
      await s.append(b, [ev('b0')]);
      assert.deepEqual(await s.append(a, [ev('a')], { idempotencyKey: key, scope: alice }), { first: 1, last: 1, duplicate: false });
      // The same key in the same scope on another stream is a different request: refused, at once.
      const other = await settles('a scoped key reused on another stream', s.append(b, [ev('b')], { idempotencyKey: key, scope: alice }));
      assert.equal(other.status, 'rejected');
      assert.equal(((other).reason as StoreError).kind, 'conflict');
      assert.equal(await s.head(b), 1, 'nothing stored on b');
      // Another scope, or the stream's own keys, are other namespaces.
      assert.deepEqual(await s.append(a, [ev('bob')], { idempotencyKey: key, scope: bob }), { first: 2, last: 2, duplicate: false });
      assert.deepEqual(await s.append(a, [ev('own')], { idempotencyKey: key }), { first: 3, last: 3, duplicate: false });
      assert.deepEqual(await s.append(a, [ev('a retry')], { idempotencyKey: key, scope: alice }), { first: 1, last: 1, duplicate: true });
      // A scope named like a stream shares none of that stream's keys.
      assert.deepEqual(await s.append(b, [ev('scope named a')], { idempotencyKey: key, scope: a }), { first: 2, last: 2, duplicate: false });
      assert.deepEqual(await s.append(a, [ev('own again')], { idempotencyKey: key }), { first: 3, last: 3, duplicate: true });
      assert.deepEqual((await s.read(a, 0)).map((e) => JSON.parse(e.body).tag), ['a', 'bob', 'own']);
      assert.deepEqual((await s.read(b, 0)).map((e) => JSON.parse(e.body).tag), ['b0', 'scope named a']);
    });

    test('findKey tells a duplicate, a conflict or an unused key without appending; keepAnswer keeps the first answer for the duplicates', async () => {
      const s = await store();
      const st = fresh('find');
      const key = `k-${run}-${++n}`;
      const opts = { idempotencyKey: key, fingerprint: 'f1', scope: `carol-${run}` };
      assert.equal(await s.findKey(st, opts), null, 'an unused key');
      // Looking a key up does not use it.
      assert.deepEqual(await s.append(st, [ev(1), ev(2)], opts), { first: 1, last: 2, duplicate: false });
      assert.deepEqual(await s.findKey(st, opts), { first: 1, last: 2, duplicate: true });
      await rejectsWith(s.findKey(st, { ...opts, fingerprint: 'f2' }), 'conflict');
      await rejectsWith(s.findKey(fresh('find-other'), opts), 'conflict');
      assert.equal(await s.findKey(st, { idempotencyKey: key }), null, 'the stream\'s own namespace has no such key');
      // The answer: kept once, the first wins, given with every duplicate.
      assert.equal(await s.keepAnswer(st, opts, '{"id":"c-1","status":"queued"}'), true);
      assert.equal(await s.keepAnswer(st, opts, '{"id":"c-1","status":"running"}'), true, 'the key has an answer');
      assert.deepEqual(await s.append(st, [ev('retry')], opts), { first: 1, last: 2, duplicate: true, answer: '{"id":"c-1","status":"queued"}' });
      assert.deepEqual(await s.findKey(st, opts), { first: 1, last: 2, duplicate: true, answer: '{"id":"c-1","status":"queued"}' });
      assert.equal(await s.keepAnswer(st, { idempotencyKey: `k-${run}-${++n}` }, 'x'), false, 'no such key');
      assert.equal(await s.keepAnswer(fresh('find-other'), opts, 'x'), false, 'not this stream\'s key');
      assert.equal(await s.head(st), 2);
      // Another instance on the same database sees the key and its answer.
      const t = await store();
      assert.deepEqual(await t.append(st, [ev('retry')], opts), { first: 1, last: 2, duplicate: true, answer: '{"id":"c-1","status":"queued"}' });
    });

    test('errors have a kind: a closed store, an empty append', async () => {
      const s = await open();
      const st = fresh('kinds');
      await rejectsWith(s.append(st, []), 'bad_input');
      await s.close();
      await rejectsWith(s.append(st, [ev(1)]), 'closed');
      await rejectsWith(s.findKey(st, { idempotencyKey: 'k' }), 'closed');
    });

    test('idempotency keys hold across two store instances on the same database', async () => {
      const a = await store();
      const st = fresh('idem2');
      const key = `k-${run}-${++n}`;
      assert.deepEqual(await a.append(st, [ev('from-a')], { idempotencyKey: key }), { first: 1, last: 1, duplicate: false });
      // A second instance (a restarted server, an admin command) honours the first one's keys.
      const b = await store();
      assert.deepEqual(await b.append(st, [ev('from-b')], { idempotencyKey: key }), { first: 1, last: 1, duplicate: true });
      assert.equal(await b.head(st), 1);
      assert.deepEqual((await b.read(st, 0)).map((e) => JSON.parse(e.body).tag), ['from-a']);
    });

    test('stores shared by several nodes: the same key on two instances at the same moment is written once', async (t) => {
      const a = await store();
      if (!a.capabilities.crossNodeWakeups) {
        // A single-process store has one writer; a second instance is a restart or an admin command, not a rival.
        t.skip(`${a.kind} is a single-process store`);
        return;
      }
      const b = await store();
      const st = fresh('idem3');
      for (let i = 0; i < 5; i++) {
        const k = `k-${run}-${++n}`;
        const [p, q] = await Promise.all([a.append(st, [ev(`a${i}`)], { idempotencyKey: k }), b.append(st, [ev(`b${i}`)], { idempotencyKey: k })]);
        assert.equal(p.first, q.first, 'both instances answer with the winner positions');
        assert.equal(p.last, q.last);
        assert.equal([p, q].filter((r) => !r.duplicate).length, 1, 'exactly one of them wrote');
      }
      assert.equal(await a.head(st), 5);
      assert.equal((await b.read(st, 0)).length, 5);
    });

    test('stores shared by several nodes: concurrent duplicates and conflicts of one key on two instances; nothing hangs', async (t) => {
      const a = await store();
      if (!a.capabilities.crossNodeWakeups) {
        t.skip(`${a.kind} is a single-process store`);
        return;
      }
      const b = await store();
      const st = fresh('idem4');
      const other = fresh('idem4-other');
      for (let i = 0; i < 6; i++) {
        // The same request on both nodes: one writes, the other answers with its positions.
        const k = `k-${run}-${++n}`;
        const both = [a.append(st, [ev(`a${i}`)], { idempotencyKey: k, fingerprint: 'same' }), b.append(st, [ev(`b${i}`)], { idempotencyKey: k, fingerprint: 'same' })];
        const [p, q] = await Promise.all(both.map((x, j) => settles(`node ${j} same request`, x)));
        assert.ok(p.status === 'fulfilled' && q.status === 'fulfilled');
        assert.equal(p.value.first, q.value.first);
        assert.equal([p.value, q.value].filter((r) => !r.duplicate).length, 1);
        // Different requests with one key, on both nodes: one writes, the other is refused.
        const k2 = `k-${run}-${++n}`;
        const rivals = [
          a.append(st, [ev(`A${i}`)], { idempotencyKey: k2, fingerprint: 'from a' }),
          b.append(st, [ev(`B${i}`)], { idempotencyKey: k2, fingerprint: 'from b' }),
        ];
        const got = await Promise.all(rivals.map((x, j) => settles(`node ${j} rival`, x)));
        assert.equal(got.filter((r) => r.status === 'fulfilled').length, 1, 'exactly one of them wrote');
        const lost = got.find((r) => r.status === 'rejected') as PromiseRejectedResult;
        assert.equal((lost.reason as StoreError).kind, 'conflict');
        // One scoped key on two streams, on both nodes: one writes, the other is refused, nobody waits.
        const k3 = `k-${run}-${++n}`;
        const spread = [a.append(st, [ev(`s${i}`)], { idempotencyKey: k3, scope: 'dave' }), b.append(other, [ev(`o${i}`)], { idempotencyKey: k3, scope: 'dave' })];
        const got3 = await Promise.all(spread.map((x, j) => settles(`node ${j} scoped`, x)));
        assert.equal(got3.filter((r) => r.status === 'fulfilled').length, 1);
        assert.equal(((got3.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason as StoreError).kind, 'conflict');
      }
      const total = (await a.head(st)) + (await a.head(other));
      assert.equal(total, 18, 'three writes per round, nothing else');
      assert.deepEqual((await b.read(st, 0)).map((e) => e.position), Array.from({ length: await a.head(st) }, (_, i) => i + 1), 'gap-free');
    });

    test('snapshots: newest, at or before a position, old ones pruned, newest kept', async () => {
      const s = await store();
      const st = fresh('snap');
      assert.equal(await s.getSnapshot(st), null);
      for (let p = 10; p <= 100; p += 10) await s.putSnapshot(st, p, `state@${p}`);
      assert.deepEqual(await s.getSnapshot(st), { position: 100, state: 'state@100' });
      assert.deepEqual(await s.getSnapshot(st, 95), { position: 90, state: 'state@90' });
      assert.deepEqual(await s.getSnapshot(st, 90), { position: 90, state: 'state@90' });
      assert.equal(await s.getSnapshot(st, 15), null, 'old snapshots are pruned');
      // A late, older snapshot does not push out the newest.
      await s.putSnapshot(st, 5, 'late');
      assert.deepEqual(await s.getSnapshot(st), { position: 100, state: 'state@100' });
      // Snapshots of another stream are separate.
      assert.equal(await s.getSnapshot(fresh('other')), null);
      // Putting the same position again replaces it.
      await s.putSnapshot(st, 100, 'again');
      assert.deepEqual(await s.getSnapshot(st), { position: 100, state: 'again' });
    });

    test('history snapshots are kept for good: a rewind finds the nearest at or before any position', async () => {
      const s = await store();
      const st = fresh('snaphist');
      for (let p = 10; p <= 100; p += 10) await s.putSnapshot(st, p, `state@${p}`, { history: true });
      assert.deepEqual(await s.getSnapshot(st), { position: 100, state: 'state@100' });
      assert.deepEqual(await s.getSnapshot(st, 15), { position: 10, state: 'state@10' }, 'the oldest is still there');
      assert.deepEqual(await s.getSnapshot(st, 55), { position: 50, state: 'state@50' });
      assert.equal(await s.getSnapshot(st, 9), null);
    });

    test('commit listeners run after the commit, in position order, never for duplicates', async () => {
      const s = await store();
      const st = fresh('listen');
      const calls: { head: number; entries: LogEntry[] | null }[] = [];
      const visible: Promise<number>[] = [];
      const stop = s.onCommit((stream, head, entries) => {
        if (stream !== st) return;
        calls.push({ head, entries });
        // After the commit: a read started now already sees the head.
        visible.push(s.head(st));
      });
      const key = `k-${run}-${++n}`;
      const results = await Promise.all([
        s.append(st, [ev(1), ev(2)]),
        s.append(st, [ev(3)], { idempotencyKey: key }),
        s.append(st, [ev(4)]),
      ]);
      await s.append(st, [ev(5)]);
      await s.append(st, [ev('dup')], { idempotencyKey: key });
      await sleep(100); // a duplicate's wake-up, if any, would come by now
      const own = calls.filter((c) => c.entries !== null);
      assert.deepEqual(
        own.map((c) => c.entries!.map((e) => e.position)),
        [[1, 2], [3], [4], [5]],
        'one call per committed append, in position order',
      );
      assert.deepEqual(own.map((c) => c.head), [2, 3, 4, 5]);
      assert.deepEqual(own.map((c) => c.entries!.map((e) => JSON.parse(e.body).tag)).flat(), [1, 2, 3, 4, 5], 'the entries are the appended events');
      assert.ok(calls.every((c) => c.head <= 5), 'no call announces a head that does not exist');
      const seen = await Promise.all(visible);
      calls.forEach((c, i) => assert.ok(seen[i] >= c.head, `the commit of head ${c.head} was visible when its listener ran`));
      assert.deepEqual(results.map((r) => r.first), [1, 3, 4]);
      stop();
      await s.append(st, [ev(6)]);
      await sleep(50);
      assert.ok(calls.every((c) => c.head <= 5), 'an unsubscribed listener is not called');
    });

    test('many callers in one turn: gap-free positions, each promise gets its own', async () => {
      const s = await store();
      const st = fresh('burst');
      const other = fresh('burst-other');
      const sizes = Array.from({ length: 300 }, (_, i) => 1 + (i % 4));
      const results = await Promise.all(sizes.map((k, i) => s.append(st, Array.from({ length: k }, (_, j) => ev(`${i}.${j}`)))));
      const otherResults = await Promise.all(Array.from({ length: 20 }, (_, i) => s.append(other, [ev(i)])));
      assertTiling(results, sizes);
      assertTiling(otherResults, otherResults.map(() => 1));
      const total = sizes.reduce((x, y) => x + y, 0);
      assert.equal(await s.head(st), total);
      // Each request's events sit at exactly the positions it was told.
      const all = await s.read(st, 0, total + 10);
      assert.equal(all.length, total);
      results.forEach((r, i) => {
        for (let j = 0; j < sizes[i]; j++) assert.equal(JSON.parse(all[r.first - 1 + j].body).tag, `${i}.${j}`);
      });
    });

    test('callers across many turns (group commit while a flush is in flight): gap-free, each gets its own', async () => {
      const s = await store();
      const st = fresh('turns');
      const pending: Promise<AppendResult>[] = [];
      for (let turn = 0; turn < 40; turn++) {
        for (let i = 0; i < 5; i++) pending.push(s.append(st, [ev(`${turn}.${i}`)]));
        await tick(); // the next appends land in a later turn, often while a flush is running
      }
      const results = await Promise.all(pending);
      assertTiling(results, results.map(() => 1));
      const all = await s.read(st, 0);
      results.forEach((r, i) => assert.equal(JSON.parse(all[r.first - 1].body).tag, `${Math.floor(i / 5)}.${i % 5}`));
      // The order of acknowledgement within one caller's sequence is the order of positions.
      const mine = results.filter((_, i) => i % 5 === 0).map((r) => r.first);
      assert.deepEqual(mine, [...mine].sort((x, y) => x - y));
    });

    test('close lets queued appends land; a reopened store sees everything, with the same epoch', async () => {
      const s = await open();
      const st = fresh('reopen');
      const epoch = s.epoch;
      assert.match(epoch, /^[A-Za-z0-9_-]{1,64}$/, 'the epoch can go into an SSE id');
      await s.append(st, [ev(1), ev(2)]);
      await s.putSnapshot(st, 2, 'snap');
      const queued = s.append(st, [ev(3)]); // not awaited before close
      await s.close();
      assert.deepEqual(await queued, { first: 3, last: 3, duplicate: false });
      await assert.rejects(s.append(st, [ev(4)]), 'a closed store refuses appends');
      const again = await store();
      assert.equal(again.epoch, epoch, 'the epoch is stable across reopen');
      assert.equal(await again.head(st), 3);
      assert.deepEqual((await again.read(st, 0)).map((e) => JSON.parse(e.body).tag), [1, 2, 3]);
      assert.deepEqual(await again.getSnapshot(st), { position: 2, state: 'snap' });
      assert.deepEqual(await again.append(st, [ev(4)]), { first: 4, last: 4, duplicate: false });
    });

    test('lazy appends (AppendOptions.lazy): positions, order, listeners and reads as any append, mixed with synced ones in one turn; a reopened store sees them', async () => {
      const s = await store();
      const st = fresh('lazy');
      const heard: number[] = [];
      const off = s.onCommit((stream, _head, entries) => {
        if (stream === st) for (const e of entries ?? []) heard.push(JSON.parse(e.body).tag);
      });
      const sizes = [1, 2, 1, 3, 1];
      let tag = 0;
      const results = await Promise.all(sizes.map((k, i) => s.append(st, Array.from({ length: k }, () => ev(++tag)), { lazy: i % 2 === 0 })));
      assertTiling(results, sizes);
      // Lazy alone, several turns.
      for (let i = 0; i < 3; i++) await s.append(st, [ev(++tag)], { lazy: true });
      // A key makes an append synced; it is still answered as keyed.
      const keyed = await s.append(st, [ev(++tag)], { lazy: true, idempotencyKey: 'lazy-key' });
      assert.deepEqual(await s.append(st, [ev(99)], { lazy: true, idempotencyKey: 'lazy-key' }), { ...keyed, duplicate: true });
      await eventually('every commit heard', () => heard.length === tag);
      off();
      assert.deepEqual(heard, Array.from({ length: tag }, (_, i) => i + 1), 'listeners hear lazy and synced commits in position order');
      assert.deepEqual((await s.read(st, 0)).map((e) => JSON.parse(e.body).tag), heard);
      await s.close();
      const again = await store();
      assert.equal(await again.head(st), tag);
    });

    test('sync() (EventStore.sync): resolves for the lazy appends before it, at once with nothing lazy, for many callers at once; refused once the store is closed', async () => {
      const s = await store();
      const st = fresh('sync');
      await s.sync();
      let tag = 0;
      // Lazy appends, each followed by a sync that must cover it, interleaved in the same turns.
      const rounds = await Promise.all(
        Array.from({ length: 12 }, async () => {
          const r = await s.append(st, [ev(++tag)], { lazy: true });
          await s.sync();
          return r.last;
        }),
      );
      assert.equal(rounds.length, 12);
      await Promise.all([s.sync(), s.sync(), s.append(st, [ev(++tag)], { lazy: true }).then(() => s.sync())]);
      assert.equal(await s.head(st), tag);
      await s.close();
      await rejectsWith(s.sync(), 'closed');
      const again = await store();
      assert.equal(await again.head(st), tag, 'what sync covered is there after a reopen');
    });

    test('stores shared by several nodes: concurrent writers on two instances stay gap-free', async (t) => {
      const a = await store();
      if (!a.capabilities.crossNodeWakeups) {
        t.skip(`${a.kind} is a single-process store`);
        return;
      }
      const b = await store();
      const st = fresh('nodes');
      const sizes: number[] = [];
      const pending: Promise<AppendResult>[] = [];
      for (let turn = 0; turn < 20; turn++) {
        for (let i = 0; i < 8; i++) {
          const k = 1 + ((turn + i) % 3);
          sizes.push(k);
          pending.push((i % 2 ? a : b).append(st, Array.from({ length: k }, (_, j) => ev(`${turn}.${i}.${j}`))));
        }
        await tick();
      }
      const results = await Promise.all(pending);
      assertTiling(results, sizes);
      const all = await b.read(st, 0);
      assert.deepEqual(all.map((e) => e.position), Array.from({ length: all.length }, (_, i) => i + 1));
      assert.equal(all.length, sizes.reduce((x, y) => x + y, 0));
    });

    test('stores shared by several nodes: a commit on one wakes the listeners of the other', async (t) => {
      const a = await store();
      if (!a.capabilities.crossNodeWakeups) {
        t.skip(`${a.kind} is a single-process store`);
        return;
      }
      const b = await store();
      const st = fresh('wake');
      const heard: { head: number; entries: LogEntry[] | null }[] = [];
      b.onCommit((stream, head, entries) => {
        if (stream === st) heard.push({ head, entries });
      });
      await a.append(st, [ev(1), ev(2)]);
      await eventually('b hears of head 2', () => heard.some((h) => h.head === 2));
      assert.equal(heard[0].entries, null, 'a wake-up from another node carries only the head');
      await a.append(st, [ev(3)]);
      await eventually('b hears of head 3', () => heard.some((h) => h.head === 3));
      assert.deepEqual((await b.read(st, 2)).map((e) => e.position), [3], 'and b reads what it missed by position');
    });

    test('broadcast: a bad topic or an oversized payload is refused on every backend; the sender never hears itself', async () => {
      const s = await store();
      const heard: string[] = [];
      s.onBroadcast((topic, payload) => heard.push(`${topic} ${payload}`));
      assert.throws(() => s.broadcast('', 'x'), /topic/);
      assert.throws(() => s.broadcast('has space', 'x'), /topic/);
      assert.throws(() => s.broadcast('t'.repeat(65), 'x'), /topic/);
      assert.throws(() => s.broadcast('t', 'é'.repeat(BROADCAST_MAX_BYTES / 2) + 'x'), /at most 7900 bytes/, 'the limit counts UTF-8 bytes, not characters');
      assert.throws(() => s.broadcast('t', 'nul\0'), /NUL/);
      s.broadcast('t', 'x'.repeat(BROADCAST_MAX_BYTES)); // exactly the limit is fine
      s.broadcast(`me-${run}`, 'hello');
      await sleep(300);
      assert.deepEqual(heard, [], 'a store does not hear its own broadcasts');
      assert.deepEqual(await s.read(`me-${run}`, 0), [], 'and nothing of them is in the log');
    });

    test('stores shared by several nodes: a broadcast reaches every other node, byte for byte, in the order sent, with its sender', async (t) => {
      const a = await store();
      if (!a.capabilities.crossNodeBroadcast) {
        t.skip(`${a.kind} is a single-process store: a broadcast has no other node to reach`);
        return;
      }
      const b = await store();
      const c = await store();
      const topic = `topic-${run}`;
      const heard = new Map<EventStore, { topic: string; payload: string; from: string }[]>([[a, []], [b, []], [c, []]]);
      const stops = [a, b, c].map((s) =>
        s.onBroadcast((tp, payload, from) => {
          if (tp === topic) heard.get(s)!.push({ topic: tp, payload, from });
        }),
      );
      const big = '✈'.repeat(Math.floor(BROADCAST_MAX_BYTES / 3)); // 3 bytes each: right at the limit
      const sent = ['one', 'two', 'one', 'ünï "quoted"\nsecond line\\', '', big, 'one'];
      for (const p of sent) a.broadcast(topic, p);
      await eventually('b and c hear all of them', () => heard.get(b)!.length === sent.length && heard.get(c)!.length === sent.length);
      for (const s of [b, c]) {
        assert.deepEqual(heard.get(s)!.map((h) => h.payload), sent, 'every message once, equal ones included, in the order sent');
        assert.equal(new Set(heard.get(s)!.map((h) => h.from)).size, 1, 'one sender, one name');
      }
      c.broadcast(topic, 'from c');
      await eventually('a and b hear c', () => heard.get(a)!.length === 1 && heard.get(b)!.length === sent.length + 1);
      assert.notEqual(heard.get(a)![0].from, heard.get(b)![0].from, 'two senders, two names');
      assert.equal(heard.get(b)!.at(-1)!.from, heard.get(a)![0].from);
      await sleep(200);
      assert.equal(heard.get(c)!.length, sent.length, 'c did not hear itself');
      stops[1]();
      a.broadcast(topic, 'after b stopped listening');
      await eventually('c hears the last one', () => heard.get(c)!.at(-1)!.payload === 'after b stopped listening');
      assert.equal(heard.get(b)!.length, sent.length + 1, 'an unsubscribed listener is not called');
      await a.close();
      assert.doesNotThrow(() => a.broadcast(topic, 'after close'), 'a closed store sends nothing, without throwing');
      await sleep(200);
      assert.notEqual(heard.get(c)!.at(-1)!.payload, 'after close');
    });

    searchContract(async () => {
      const s = await open();
      shared.push(s);
      return s;
    }, run);
  });
}

/**
 * Keys as a store before scoped keys (schema 1 on SQLite, 2 on PostgreSQL) held
 * them: global, each prefixed by its caller by hand, with the stream that wrote
 * it. A backend's test writes these into an old-shaped database with one event
 * at each position named, opens it, and runs `checkLegacyKeys`.
 */
export const LEGACY_KEYS: { key: string; stream: string; first: number; last: number }[] = [
  // The floor's `<stream>:<key>`: the default floor's key K, project p's key K.
  { key: 'floor:K', stream: 'floor', first: 1, last: 1 },
  { key: 'floor:p:K', stream: 'floor:p', first: 1, last: 1 },
  // Issue 12: the default floor's key `p:Q` took the text project p's key Q would have had.
  { key: 'floor:p:Q', stream: 'floor', first: 2, last: 3 },
  // Other shapes keep their text: approvals' `approval:<key>`, Work's `<stream>|<uid>|<key>`.
  { key: 'approval:D', stream: 'approvals', first: 1, last: 1 },
  { key: 'work:p|alice|W', stream: 'work:p', first: 1, last: 1 },
  // Identity's `identity:<scope>:<key>`: the stream prefix goes, the scope stays.
  { key: 'identity:login:bob:L', stream: 'identity', first: 1, last: 1 },
];

export async function checkLegacyKeys(s: EventStore): Promise<void> {
  const dup = (first: number, last: number) => ({ first, last, duplicate: true });
  // A request sent before the upgrade and retried after it with its own key is recognised.
  assert.deepEqual(await s.append('floor', [ev('retry')], { idempotencyKey: 'K', fingerprint: 'new' }), dup(1, 1));
  assert.deepEqual(await s.append('floor:p', [ev('retry')], { idempotencyKey: 'K', fingerprint: 'new' }), dup(1, 1));
  assert.deepEqual(await s.append('floor', [ev('retry')], { idempotencyKey: 'p:Q' }), dup(2, 3));
  // Project p's key Q is its own again.
  assert.deepEqual(await s.append('floor:p', [ev('Q')], { idempotencyKey: 'Q' }), { first: 2, last: 2, duplicate: false });
  assert.deepEqual(await s.append('identity', [ev('retry')], { idempotencyKey: 'login:bob:L' }), dup(1, 1));
  // The others are found under their old text in their stream, and nowhere else.
  assert.deepEqual(await s.append('approvals', [ev('old text')], { idempotencyKey: 'approval:D' }), dup(1, 1));
  assert.deepEqual(await s.append('work:p', [ev('old text')], { idempotencyKey: 'work:p|alice|W' }), dup(1, 1));
  assert.deepEqual(await s.append('approvals', [ev('D')], { idempotencyKey: 'D' }), { first: 2, last: 2, duplicate: false });
  // The log itself is untouched.
  assert.equal(await s.head('floor'), 3);
  assert.deepEqual((await s.read('floor:p', 0)).map((e) => JSON.parse(e.body).tag), ['old', 'Q']);
}
