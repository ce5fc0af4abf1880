// A replay larger than a reader's buffer is written at the reader's pace, not
// cut as a slow consumer: a reader that comes back more than 4 MiB of frames
// behind and reads slowly catches up exactly (every position once, in order,
// the frames published meanwhile included), from the ring and from the log;
// if what was published meanwhile outgrows the buffer, the scope starts again
// from a fresh snapshot marked reset, and goes on exactly from there.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { inProcess, post } from './support/server.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await sleep(5);
  }
}

/** Posts `n` floor events of about `size` bytes each, in requests under the body limit; returns the head. */
async function fill(url: string, n: number, size: number): Promise<number> {
  const activity = 'z'.repeat(size);
  const per = Math.max(1, Math.floor((900 * 1024) / size));
  let head = 0;
  for (let i = 0; i < n; i += per) {
    const batch = Array.from({ length: Math.min(per, n - i) }, (_, j) => ({ type: 'status', agent: `p${(i + j) % 20}`, activity }));
    const r = await post(url, batch);
    assert.equal(r.status, 200, JSON.stringify(r.json));
    head = r.json.last;
  }
  return head;
}

interface SlowReader {
  ids: number[];
  /** Positions of the snapshots seen, with their reset flag. */
  snapshots: { position: number; reset: boolean }[];
  errors: string[];
  bytes: number;
  done: Promise<void>;
  close(): void;
}

/**
 * A raw HTTP reader of an SSE stream that reads slowly: every `everyMs` it
 * takes what the socket holds (one read of the kernel's, up to 64 KiB),
 * so the kernel's buffers fill and the server sees an unread backlog. It
 * records every `id:` and every `error` frame.
 */
function slowReader(url: string, path: string, lastEventId: string, everyMs = 10): SlowReader {
  const u = new URL(url);
  const sock = connect(Number(u.port), u.hostname);
  sock.write(`GET ${path} HTTP/1.1\r\nhost: ${u.host}\r\naccept: text/event-stream\r\nlast-event-id: ${lastEventId}\r\n\r\n`);
  const r: SlowReader = { ids: [], snapshots: [], errors: [], bytes: 0, done: Promise.resolve(), close: () => sock.destroy() };
  let buf = '';
  let headers = true;
  sock.setEncoding('latin1');
  const take = (chunk: string) => {
    r.bytes += chunk.length;
    buf += chunk;
    if (headers) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      buf = buf.slice(end + 4);
      headers = false;
    }
    let cut: number;
    while ((cut = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      const id = /^id: [^:\n]+:(\d+)$/m.exec(block);
      if (/^event: snapshot$/m.test(block)) r.snapshots.push({ position: Number(id![1]), reset: /"reset":true/.test(block) });
      else if (id) r.ids.push(Number(id[1]));
      if (/^event: error$/m.test(block)) r.errors.push(block);
    }
  };
  const timer = setInterval(() => {
    const c = sock.read() as string | null;
    if (c !== null) take(c);
  }, everyMs);
  r.done = new Promise((ok) => sock.once('close', () => ok()));
  sock.once('close', () => clearInterval(timer));
  sock.on('error', () => {});
  return r;
}

async function catchUpSlowly(cfg: { ringSize: number }, what: string): Promise<void> {
  const srv = await inProcess({ ...cfg, heartbeatMs: 50 });
  try {
    // About 6 MB of frames behind: more than the 4 MiB a subscriber may leave unsent.
    const behind = await fill(srv.url, 200, 30 * 1024);
    const reader = slowReader(srv.url, '/stream', `${srv.store.epoch}:0`);
    // Frames published while it is catching up (and heartbeats every 50 ms) must not cut it either.
    let head = behind;
    for (let i = 0; i < 10; i++) {
      await sleep(100);
      head = (await post(srv.url, { type: 'status', agent: 'live', activity: `during ${i}` })).json.last;
    }
    const t0 = Date.now();
    while (reader.ids.at(-1) !== head && reader.errors.length === 0 && Date.now() - t0 < 60_000) await sleep(50);
    reader.close();
    assert.deepEqual(reader.errors, [], `${what}: the reader was not cut`);
    assert.equal(srv.floor.channel.stats.slowDisconnects, 0);
    assert.equal(reader.ids.length, head, `${what}: every frame once`);
    assert.deepEqual(reader.ids, Array.from({ length: head }, (_, i) => i + 1), `${what}: in order, no gap, no duplicate`);
    assert.ok(reader.bytes > 5 * 1024 * 1024, `${what}: read ${reader.bytes} bytes`);
  } finally {
    await srv.close();
  }
}

describe('paced replay', { timeout: 120_000 }, () => {
  test('frames published during a slow catch-up that outgrow the buffer: a reset snapshot, then exactly the rest', async () => {
    const srv = await inProcess({ ringSize: 10_000, maxBufferedBytes: 256 * 1024 });
    try {
      // About 12 MB behind: more than the kernel's socket buffers take, so the catch-up waits on the reader.
      const behind = await fill(srv.url, 400, 30 * 1024);
      const reader = slowReader(srv.url, '/stream', `${srv.store.epoch}:0`);
      // While it catches up, 600 KB more arrive: more than its 256 KiB buffer.
      await until(() => [...srv.floor.channel.subs].some((sub) => sub.queue !== null));
      await fill(srv.url, 20, 30 * 1024);
      let head = (await post(srv.url, { type: 'status', agent: 'live', activity: 'last' })).json.last;
      const seen = (p: number) => reader.ids.at(-1) === p || reader.snapshots.some((x) => x.position >= p);
      const t0 = Date.now();
      while (!seen(head) && reader.errors.length === 0 && Date.now() - t0 < 60_000) await sleep(50);
      // And it is live again.
      head = (await post(srv.url, { type: 'status', agent: 'live', activity: 'after the reset' })).json.last;
      while (!seen(head) && reader.errors.length === 0 && Date.now() - t0 < 60_000) await sleep(20);
      reader.close();
      assert.deepEqual(reader.errors, [], 'the reader was not cut');
      assert.equal(reader.snapshots.length, 1, 'one snapshot');
      const snap = reader.snapshots[0];
      assert.equal(snap.reset, true, 'marked reset');
      assert.ok(snap.position > behind, 'taken after what was published meanwhile began');
      const before = reader.ids.filter((p) => p <= snap.position);
      assert.deepEqual(before, Array.from({ length: before.length }, (_, i) => i + 1), 'the replay so far, in order');
      const after = reader.ids.filter((p) => p > snap.position);
      assert.deepEqual(after, Array.from({ length: head - snap.position }, (_, i) => snap.position + 1 + i), 'after the snapshot, exactly the rest');
      assert.equal(reader.ids.length, before.length + after.length);
    } finally {
      await srv.close();
    }
  });

  test('a slow reader more than 4 MiB behind catches up from the ring, exactly, without being cut', () => catchUpSlowly({ ringSize: 10_000 }, 'ring'));
  test('a slow reader more than 4 MiB behind catches up from the log, exactly, without being cut', () => catchUpSlowly({ ringSize: 5 }, 'log'));
});
