// A resume that loses nothing (issue 36, point 1): every SSE message carries
// its own id, on every scope of the one live connection, so a reader whose
// connection drops after any message and comes back with that message's id
// (the browser's Last-Event-ID, a mux cursor) gets exactly the rest: the
// union is the history, each message once, in order.
//
// The cut is simulated the way a browser sees it: a reader keeps the first k
// messages of a long history, the connection goes, and it reconnects with the
// k-th message's id. For k = 1..N, on a list stream, a nest stream and the
// floor, on the single-scope endpoints and on `GET /live`.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { inProcess, post } from './support/server.js';
import { openSse, type SseFrame } from './support/sse.js';
import { until } from './support/until.js';
import { flockModel, type FlockModel } from './support/flock-model.js';
import { flockClient } from './support/flock-client.js';
import { flockTs } from '../src/core/flock.js';
import { LiveChannel, Live, type LiveSource } from '../src/server/live/index.js';
import { LOCAL_OWNER, LocalAccess } from '../src/server/access.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

type Srv = Awaited<ReturnType<typeof inProcess>>;

/** A message as a reader keeps it: its id and what it says. */
interface Msg {
  id: string;
  text: string;
}

/** The messages of a stream until `count` of them came (or it went quiet after at least `min`). */
async function read(url: string, headers: Record<string, string>, count: number, mux: boolean): Promise<Msg[]> {
  const sse = await openSse(url, headers);
  try {
    const msgs = () => sse.frames.filter((f) => !(mux && JSON.parse(f.data).s === '')).filter((f) => f.event !== 'error');
    await until(`${count} messages on ${url}`, () => msgs().length >= count, 20_000);
    return msgs()
      .slice(0, count)
      .map((f: SseFrame) => (mux ? muxMsg(f) : { id: f.id ?? '', text: `${f.event} ${f.data}` }));
  } finally {
    sse.close();
  }
}

function muxMsg(f: SseFrame): Msg {
  const m = JSON.parse(f.data) as { e: string; p?: string; d: unknown };
  return { id: m.p ?? '', text: `${m.e} ${JSON.stringify(m.d)}` };
}

/**
 * For k = 1..n: keep the first k messages of a fresh reader, resume from the
 * k-th one's id, and check that the union is `history`, each message once.
 */
async function resumeEverywhere(label: string, history: Msg[], n: number, open: (cursor: string | null, count: number) => Promise<Msg[]>): Promise<void> {
  assert.ok(history.length > n, `${label}: a history longer than ${n} messages (${history.length})`);
  const ids = new Set(history.map((m) => m.id));
  assert.equal(ids.size, history.length, `${label}: every message carries its own id (${history.length} messages, ${ids.size} ids)`);
  for (let k = 1; k <= n; k++) {
    const first = (await open(null, k)).slice(0, k);
    const rest = await open(first[k - 1].id, history.length - k);
    const union = [...first, ...rest].map((m) => m.text);
    assert.deepEqual(union, history.map((m) => m.text), `${label}: cut after message ${k} (id ${first[k - 1].id}), resumed: the history, each once, in order`);
  }
}

describe('a resume from any message is exact', () => {
  let srv: Srv;
  let model: FlockModel;
  before(async () => {
    model = await flockModel('anthropic');
    srv = await inProcess({ models: model.roster() });
  });
  after(async () => {
    await srv?.close();
    await model?.close();
  });

  test('a list stream (GET /api/events?list_id= and /live)', { timeout: 180_000 }, async () => {
    const c = flockClient(srv.url);
    // A stranger's list of six plans: triaged, then it waits for a person's verdicts (a history that holds still).
    const list_id = await c.start(['plan a', 'plan b', 'plan c', 'plan d', 'plan e', 'plan f'].map((x) => `${x} planning`).join('\n'), 'resumer');
    const w = await c.watch(list_id);
    await until('six items triaged', () => w.events().filter((e) => e.event === 'item.triaged').length >= 6, 30_000);
    w.close();
    const single = `${srv.url}/api/events?list_id=${list_id}`;
    const history = await settled(single, {}, false);
    await resumeEverywhere('list, single-scope', history, 7, (cursor, count) => read(single, cursor ? { 'last-event-id': cursor } : {}, count, false));
    const scope = `flock.list:default/${list_id}`;
    const muxUrl = (cursor: string | null) => `${srv.url}/live?s=${encodeURIComponent(cursor ? `${scope}@${cursor}` : scope)}`;
    const muxHistory = await settled(muxUrl(null), {}, true);
    await resumeEverywhere('list, /live', muxHistory, 7, (cursor, count) => read(muxUrl(cursor), {}, count, true));
  });

  test('a nest stream (GET /api/events?nest_id= and /live)', { timeout: 180_000 }, async () => {
    const nest_id = 'resume-nest';
    await srv.flock.append([{ type: 'nest.created', nest_id, name: 'Resume nest', crows: ['Pepper'], by: 'ann', ts: flockTs(Date.now()) }]);
    for (let i = 1; i <= 40; i++) {
      await srv.flock.append([{ type: 'nest.message', nest_id, msg_id: `${nest_id}-${i}`, kind: 'say', author: 'owner', text: `line ${i}`, to: '', refers_to: '', tagged_by: 'header', ts: flockTs(Date.now()) }]);
    }
    const single = `${srv.url}/api/events?nest_id=${nest_id}`;
    const history = await settled(single, {}, false);
    assert.equal(history.length, 40, 'the nest keeps the forty messages');
    await resumeEverywhere('nest, single-scope', history, 12, (cursor, count) => read(single, cursor ? { 'last-event-id': cursor } : {}, count, false));
    const scope = `flock.nest:default/${nest_id}`;
    const muxUrl = (cursor: string | null) => `${srv.url}/live?s=${encodeURIComponent(cursor ? `${scope}@${cursor}` : scope)}`;
    await resumeEverywhere('nest, /live', await settled(muxUrl(null), {}, true), 12, (cursor, count) => read(muxUrl(cursor), {}, count, true));
  });

  test('the floor (GET /stream and /live), replayed from the start', { timeout: 180_000 }, async () => {
    for (let i = 0; i < 30; i++) assert.equal((await post(srv.url, { type: 'status', agent: `a${i % 4}`, activity: `step ${i}`, status: 'working' })).status < 300, true);
    const start = `${srv.store.epoch}:0`;
    const single = `${srv.url}/stream`;
    const history = await settled(single, { 'last-event-id': start }, false);
    await resumeEverywhere('floor, single-scope', history, 10, (cursor, count) => read(single, { 'last-event-id': cursor ?? start }, count, false));
    const muxUrl = (cursor: string | null) => `${srv.url}/live?s=${encodeURIComponent(`floor:default@${cursor ?? start}`)}`;
    await resumeEverywhere('floor, /live', await settled(muxUrl(null), {}, true), 10, (cursor, count) => read(muxUrl(cursor), {}, count, true));
  });
});

/** A stream's whole history, read once it has held still for half a second. */
async function settled(url: string, headers: Record<string, string>, mux: boolean): Promise<Msg[]> {
  const sse = await openSse(url, headers);
  try {
    let last = -1;
    let since = Date.now();
    await until(`${url} holds still`, () => {
      if (sse.frames.length !== last) {
        last = sse.frames.length;
        since = Date.now();
      }
      return last > 0 && Date.now() - since > 500;
    }, 20_000);
    return sse.frames.filter((f) => f.event !== 'error' && !(mux && JSON.parse(f.data).s === '')).map((f) => (mux ? muxMsg(f) : { id: f.id ?? '', text: `${f.event} ${f.data}` }));
  } finally {
    sse.close();
  }
}

describe('a frame of several messages (a Work entry that changes several aggregates)', () => {
  test('each message has its own id; a resume from any of them sends the rest of the frame, then the next frames', { timeout: 60_000 }, async () => {
    const live = new Live(new LocalAccess(), { epoch: 'ep' });
    let head = 0;
    const frames: ReturnType<LiveChannel['frame']>[] = [];
    const source: LiveSource = {
      position: () => head,
      snapshot: () => ch.frame(head, [{ name: 'snapshot', data: '{}' }]),
      replay: async (after, upTo) => frames.filter((f) => f.position > after && f.position <= upTo),
    };
    const ch = new LiveChannel('test:alpha', 'ep', source, live.channelOptions({ ringSize: 0, minFlushIntervalMs: 0 }));
    live.declare('test', { need: () => null, open: () => ch });
    for (let p = 1; p <= 3; p++) {
      frames.push(ch.frame(p, [0, 1, 2].map((k) => ({ name: 'x.changed', data: `{"p":${p},"k":${k}}` }))));
      head = p;
    }
    const text = frames.map((f) => f.bytes('single').toString()).join('');
    const ids = [...text.matchAll(/^id: (.*)$/gm)].map((m) => m[1]);
    assert.equal(new Set(ids).size, 9, `nine messages, nine ids: ${ids.join(' ')}`);
    assert.deepEqual(LiveChannel.parseId(ids[0]), { epoch: 'ep', position: 1, part: 0 });
    assert.deepEqual(LiveChannel.parseId(ids[2]), { epoch: 'ep', position: 1 });
    const server = createServer((req, res) => {
      const url = new URL(req.url!, 'http://x');
      const go = url.pathname === '/live' ? live.serveMux(req, res, url, LOCAL_OWNER) : live.serve(req, res, url, LOCAL_OWNER, ['test:alpha']);
      void Promise.resolve(go).catch(() => res.destroy());
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const all = (await read(`${base}/s`, { 'last-event-id': 'ep:0' }, 9, false)).map((m) => m.text);
      assert.equal(all.length, 9);
      for (let k = 1; k < 9; k++) {
        const rest = await read(`${base}/s`, { 'last-event-id': ids[k - 1] }, 9 - k, false);
        assert.deepEqual([...all.slice(0, k), ...rest.map((m) => m.text)], all, `single-scope, resumed from ${ids[k - 1]}`);
        const restMux = await read(`${base}/live?s=${encodeURIComponent(`test:alpha@${ids[k - 1]}`)}`, {}, 9 - k, true);
        assert.deepEqual(restMux.map((m) => m.text.split(' ')[1]), rest.map((m) => m.text.split(' ')[1]), `/live, resumed from ${ids[k - 1]}`);
      }
    } finally {
      live.stop();
      server.closeAllConnections();
      await new Promise((ok) => server.close(ok));
    }
  });
});
