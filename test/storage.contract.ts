// The storage contract: what every EventStore backend must do, as tests.
// A backend's test file calls `storageContract(name, open, cleanup)`, where
// every `open()` returns a new store instance on the same database (so a test
// can reopen, or run two instances side by side as two nodes would). Tests use
// their own stream names and keys, so they never see each other's events.
//
// Tests that only make sense for stores shared by several processes are gated
// on `capabilities.crossNodeWakeups` (or `crossNodeBroadcast`), not on the
// backend's name.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { BROADCAST_MAX_BYTES, type AppendResult, type EventStore, type LogEntry, type NewEvent } from '../src/storage/types.js';

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
    after(async () => {
      for (const s of open_) await s.close().catch(() => {});
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
  });
}
