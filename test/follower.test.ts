// The stream follower every service folds its log stream with
// (src/server/follower.ts), on a real SQLite store: local commits are folded
// in order without a read, a gap is read, a wake-up during a read gets another
// round (the cross-node path: a wake-up carrying only the head), and no entry
// is ever applied twice.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { SqliteStore, type CommitListener, type EventStore } from '../src/storage/index.js';
import { StreamFollower, rebuildFrames } from '../src/server/follower.js';
import { tempDir } from './support/server.js';

const stores: SqliteStore[] = [];
after(async () => {
  for (const s of stores) await s.close();
});

/**
 * A real store seen through a tap: counts reads, can hold a read after it
 * returned (to land a commit while it is in flight), and can stop forwarding
 * commits, so the test plays another node whose commits arrive as head-only
 * wake-ups.
 */
function tapped() {
  const real = new SqliteStore({ path: join(tempDir(), 'roost.db') });
  stores.push(real);
  const listeners = new Set<CommitListener>();
  const tap = { reads: 0, forward: true, hold: null as Promise<void> | null, onRead: null as (() => void) | null };
  real.onCommit((s, h, e) => {
    if (tap.forward) for (const l of listeners) l(s, h, e);
  });
  const store = {
    kind: real.kind,
    capabilities: real.capabilities,
    epoch: real.epoch,
    append: real.append.bind(real),
    head: real.head.bind(real),
    putSnapshot: real.putSnapshot.bind(real),
    getSnapshot: real.getSnapshot.bind(real),
    close: real.close.bind(real),
    async read(stream: string, afterPos: number, limit?: number) {
      tap.reads++;
      const r = await real.read(stream, afterPos, limit);
      tap.onRead?.();
      if (tap.hold) await tap.hold;
      return r;
    },
    onCommit(l: CommitListener) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
  } as unknown as EventStore;
  /** Wake every listener as another node's commit would: the head, no entries. */
  const wake = (stream: string, head: number) => {
    for (const l of listeners) l(stream, head, null);
  };
  return { real, store, tap, wake };
}

function follower(store: EventStore, stream = 's') {
  const applied: number[] = [];
  const seenAt: number[] = [];
  const f: StreamFollower = new StreamFollower(store, stream, {
    apply: (e) => {
      applied.push(e.position);
      seenAt.push(f.position);
    },
  });
  return { f, applied, seenAt };
}

/** Fails instead of hanging when a wake-up is lost. */
function within<T>(ms: number, p: Promise<T>, why: string): Promise<T> {
  let t!: NodeJS.Timeout;
  return Promise.race([p, new Promise<T>((_, no) => (t = setTimeout(() => no(new Error(why)), ms)))]).finally(() => clearTimeout(t));
}

const ev = (n: number) => Array.from({ length: n }, (_, i) => ({ type: 't', body: JSON.stringify({ i }) }));

test('local commits are folded in position order, straight from the commit, without reading', async () => {
  const { real, store, tap } = tapped();
  await real.append('s', ev(2));
  const { f, applied, seenAt } = follower(store);
  f.listen();
  await f.start();
  assert.deepEqual(applied, [1, 2]);
  const readsAfterStart = tap.reads;
  for (let i = 0; i < 5; i++) {
    const r = await real.append('s', ev(3));
    await f.folded(r.last);
  }
  await real.append('other', ev(4)); // another stream: not ours
  assert.deepEqual(applied, Array.from({ length: 17 }, (_, i) => i + 1));
  assert.deepEqual(seenAt, applied, 'apply sees the position of the entry it folds');
  assert.equal(f.position, 17);
  assert.equal(tap.reads, readsAfterStart, 'local commits at the next position need no read');
  await f.stop();
});

test('a gap is read from the store; a commit at or below the position is ignored', async () => {
  const { real, store, tap } = tapped();
  const { f, applied } = follower(store);
  f.listen();
  await f.start();
  tap.forward = false; // positions 1..3 are never announced to this follower
  await real.append('s', ev(3));
  await new Promise((r) => setImmediate(r)); // listeners hear of a commit within the turn its append resolved
  tap.forward = true;
  const reads = tap.reads;
  const r = await real.append('s', ev(1)); // announced with its entries, but 1..3 are missing
  await f.folded(r.last);
  assert.deepEqual(applied, [1, 2, 3, 4]);
  assert.ok(tap.reads > reads, 'the gap was read');
  // The same entries again (a duplicate wake-up, an overlapping batch): nothing is folded twice.
  const all = await real.read('s', 0);
  f.onCommit(4, all);
  f.onCommit(4, all.slice(2));
  f.onCommit(5, all.slice(2)); // says head 5 but starts at 3: read, and nothing past 4 exists
  await f.catchUp();
  assert.deepEqual(applied, [1, 2, 3, 4]);
  await f.stop();
});

test('another node\'s wake-up (head only) during a read gets one more round, and nothing is applied twice', async () => {
  const { real, store, tap, wake } = tapped();
  const { f, applied } = follower(store);
  f.listen();
  await f.start();
  tap.forward = false; // from here this follower is on "another node": it only gets wake-ups
  await real.append('s', ev(2));

  let release!: () => void;
  let inFlight!: () => void;
  const readIssued = new Promise<void>((ok) => (inFlight = ok));
  tap.hold = new Promise<void>((ok) => (release = ok));
  tap.onRead = () => inFlight();
  const reads = tap.reads;
  wake('s', 2); // starts a read, which returns 1..2 and is then held
  await readIssued;
  tap.onRead = null;
  tap.hold = null;
  // A commit lands while that read is in flight; its wake-up must not be lost.
  await real.append('s', ev(3));
  wake('s', 5);
  wake('s', 5); // twice: still one more round, and no double folding
  release();
  await within(2000, f.folded(5), 'the wake-up during the read was lost: position 5 was never folded');
  assert.deepEqual(applied, [1, 2, 3, 4, 5]);
  assert.ok(tap.reads - reads >= 2, `a second round was read (${tap.reads - reads} reads)`);

  // A wake-up for what is folded already reads nothing new and folds nothing.
  wake('s', 5);
  await f.catchUp();
  assert.deepEqual(applied, [1, 2, 3, 4, 5]);
  await f.stop();
});

test('a restored snapshot is the starting position, snapshots are stored every N, and frames are rebuilt for a replay', async () => {
  const { real, store } = tapped();
  await real.append('s', ev(5));
  await real.putSnapshot('s', 3, JSON.stringify({ position: 3 }));
  const applied: number[] = [];
  let f = new StreamFollower(store, 's', {
    apply: (e) => applied.push(e.position),
    snapshots: { every: 4, body: (p) => JSON.stringify({ position: p }), label: 'test snapshot' },
  });
  f.listen();
  await f.start(async () => JSON.parse((await real.getSnapshot('s'))!.state).position);
  assert.deepEqual(applied, [4, 5], 'folded from the snapshot on');
  const r = await real.append('s', ev(4));
  await f.folded(r.last);
  await f.stop();
  // The snapshot is written in the background: give it a moment.
  let snap = 0;
  for (let i = 0; i < 50 && snap !== 7; i++) {
    snap = JSON.parse((await real.getSnapshot('s'))!.state).position;
    if (snap !== 7) await new Promise((ok) => setTimeout(ok, 10));
  }
  assert.equal(snap, 7, 'a snapshot 4 events after the restored one');

  const frames = await rebuildFrames(store, 's', { state: 0, position: 3 }, 5, 9, (sum, e) => ({
    state: sum + e.position,
    frame: { position: e.position, text: `${e.position}:${sum + e.position}` },
  }));
  assert.deepEqual(
    frames.map((fr) => [fr.position, fr.text]),
    [
      [6, '6:15'],
      [7, '7:22'],
      [8, '8:30'],
      [9, '9:39'],
    ],
  );
  f = new StreamFollower(store, 's', { apply: () => {} });
  await f.start();
  assert.equal(f.position, 9);
});
