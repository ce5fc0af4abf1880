// The live floor stream seen by a real EventSource client (the `eventsource`
// package): snapshot then events, and after any break (a cut connection, a
// server restart, a replay from the log rather than memory) exactly the missed
// frames, in order, with no duplicate at the seam.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { EventSource } from 'eventsource';
import { child, inProcess, post, tempDir } from './support/server.js';
import { openSse } from './support/sse.js';
import { until as waitUntil } from './support/until.js';
import { SWEEP, applyEvent, floorFromJSON, floorToJSON, type FloorState } from '../src/core/floor.js';

interface Got {
  type: string;
  id: string;
  data: any;
  raw: string;
}

/** Everything an EventSource receives, in order. */
function collect(es: EventSource): Got[] {
  const got: Got[] = [];
  for (const type of ['snapshot', 'event', 'removed']) {
    es.addEventListener(type, (m: MessageEvent) => got.push({ type, id: m.lastEventId, data: JSON.parse(m.data), raw: m.data }));
  }
  return got;
}

/** A fetch for EventSource that records each connect and can hold reconnects back. */
function gatedFetch(extraHeaders: Record<string, string> = {}) {
  let gate: Promise<void> | null = null;
  let release = () => {};
  const calls: { url: string; lastEventId: string | undefined }[] = [];
  const fn = async (url: string | URL, init?: RequestInit): Promise<Response> => {
    const headers = { ...(init?.headers as Record<string, string>), ...(calls.length === 0 ? extraHeaders : {}) };
    calls.push({ url: String(url), lastEventId: headers['Last-Event-ID'] });
    if (gate) await gate;
    return fetch(url, { ...init, headers });
  };
  return {
    fetch: fn,
    calls,
    hold() {
      gate = new Promise((ok) => (release = ok));
    },
    open() {
      gate = null;
      release();
    },
  };
}

const until = (what: string, cond: () => boolean, ms = 8000) => waitUntil(what, cond, ms, 10);

const pos = (id: string) => Number(id.split(':')[1]);
const epochOf = (id: string) => id.split(':')[0];
const range = (a: number, b: number) => Array.from({ length: b - a + 1 }, (_, i) => a + i);
const eventIds = (got: Got[]) => got.filter((g) => g.type !== 'snapshot').map((g) => pos(g.id));

async function postOne(url: string, i: number, tag = 'e'): Promise<number> {
  const r = await post(url, { type: 'status', agent: `${tag}-${i % 7}`, team: `T${i % 3}`, activity: `${tag} #${i}`, status: i % 5 ? 'working' : 'thinking' });
  assert.equal(r.status, 200);
  return r.json.last;
}

describe('in-process server', { timeout: 30_000 }, () => {
  test('snapshot first, then event frames with their effects', async () => {
    const srv = await inProcess();
    const es = new EventSource(srv.url + '/stream');
    const got = collect(es);
    try {
      await post(srv.url, [{ type: 'join', agent: 'lead', role: 'lead', team: 'Core' }, { type: 'join', agent: 'rev', parent: 'lead' }]);
      await until('snapshot', () => got.length >= 1);
      const snap = got[0];
      assert.equal(snap.type, 'snapshot');
      assert.equal(snap.data.reset, false);
      assert.equal(snap.data.protocol, 1);
      assert.equal(pos(snap.id), snap.data.position);
      await post(srv.url, { type: 'message', agent: 'rev', text: 'done' });
      await until('the message frame', () => got.some((g) => g.type === 'event' && g.data.event.type === 'message'));
      const last = got.at(-1)!;
      assert.equal(last.type, 'event');
      assert.equal(pos(last.id), 3);
      assert.deepEqual(last.data.event, { type: 'message', agent: 'rev', text: 'done', ts: last.data.event.ts });
      assert.deepEqual(last.data.effects, [
        { kind: 'plane', from: 'rev', to: 'lead', text: 'done' },
        { kind: 'speech', agent: 'rev', text: 'done' },
      ]);
      // the snapshot plus the frames after it give every agent exactly once
      assert.deepEqual(eventIds(got), range(snap.data.position + 1, 3));
    } finally {
      es.close();
      await srv.close();
    }
  });

  test('a client folding the snapshot and the frames with the shared fold sees exactly /state', async () => {
    const srv = await inProcess({ sweepEveryMs: 50 });
    const es = new EventSource(srv.url + '/stream');
    const got = collect(es);
    try {
      await until('the snapshot', () => got.length >= 1);
      const now = Date.now();
      await post(srv.url, [
        { type: 'join', agent: { id: 'lead', role: 'lead' }, team: { id: 'core', name: 'Core' } },
        { type: 'tool', agent: 'lead', subagent: { key: 'k1', type: 'code-reviewer' }, tool: 'Read', activity: 'Reading' },
        { type: 'message', agent: 'lead', to: ['ghost', 'lead/code-reviewer-k1'], text: 'go' },
        { type: 'task', agent: 'lead', task: 'Ship it' },
        { type: 'leave', agent: 'ghost', ts: now - 10_000 },
      ]);
      await until('the sweep', () => got.some((g) => g.type === 'removed'));
      await post(srv.url, [{ type: 'reset' }, { type: 'join', agent: 'again', team: 'T' }, { type: 'status', agent: 'again', status: 'waiting', activity: 'Approve?' }]);
      const st = await (await fetch(srv.url + '/state')).json();
      await until('every frame', () => pos(got.at(-1)!.id) === st.position);
      const client: FloorState = floorFromJSON(got[0].data.state);
      for (const g of got.slice(1)) {
        if (g.type === 'event') applyEvent(client, g.data.event);
        else if (g.type === 'removed') applyEvent(client, { type: SWEEP, ts: g.data.ts });
      }
      const { protocol: _p, epoch: _e, position: _pos, ...server } = st;
      assert.deepEqual(JSON.parse(JSON.stringify(floorToJSON(client))), server);
    } finally {
      es.close();
      await srv.close();
    }
  });

  test('a connection cut mid-stream resumes with exactly the missed frames', async () => {
    const srv = await inProcess();
    const sockets: Socket[] = [];
    srv.server.on('request', (req) => {
      if (req.url?.startsWith('/stream?who=cut')) sockets.push(req.socket);
    });
    const gf = gatedFetch();
    const es = new EventSource(srv.url + '/stream?who=cut', { fetch: gf.fetch });
    const ref = new EventSource(srv.url + '/stream'); // never cut: the reference
    const got = collect(es);
    const refGot = collect(ref);
    try {
      await until('both snapshots', () => got.length >= 1 && refGot.length >= 1);
      let i = 0;
      let head = 0;
      for (; i < 20; i++) head = await postOne(srv.url, i);
      await until('frames before the cut', () => got.length > 10);
      gf.hold();
      const cutAt = pos(got.at(-1)!.id);
      sockets[0].destroy(); // the server side of `es`'s connection
      for (; i < 60; i++) head = await postOne(srv.url, i); // missed while away
      await until('the reconnect attempt', () => gf.calls.length === 2);
      gf.open();
      for (; i < 80; i++) head = await postOne(srv.url, i); // live again
      await until('all frames', () => got.length > 0 && pos(got.at(-1)!.id) === head && pos(refGot.at(-1)!.id) === head);
      assert.ok(cutAt < head - 60 + 1, 'the cut happened mid-stream');
      assert.match(gf.calls[1].lastEventId ?? '', /^[\w-]+:\d+$/, 'the client resumed with Last-Event-ID');
      assert.equal(got.filter((g) => g.type === 'snapshot').length, 1, 'no second snapshot: the resume is a replay');
      assert.deepEqual(eventIds(got), range(1, head), 'every frame exactly once, in order');
      assert.deepEqual(
        got.filter((g) => g.type === 'event').map((g) => g.raw),
        refGot.filter((g) => g.type === 'event').map((g) => g.raw),
        'the replayed frames are the frames the reference saw live',
      );
    } finally {
      es.close();
      ref.close();
      await srv.close();
    }
  });

  test('an unknown, foreign-epoch or future id gets a fresh snapshot marked reset', async () => {
    const srv = await inProcess();
    try {
      await post(srv.url, [{ type: 'join', agent: 'a' }, { type: 'join', agent: 'b' }]);
      const epoch = srv.store.epoch;
      for (const id of ['not-an-id', 'zz9zz9:1', `${epoch}:999`, `${epoch}:-1`, `${epoch}:1:2`]) {
        const gf = gatedFetch({ 'Last-Event-ID': id });
        const es = new EventSource(srv.url + '/stream', { fetch: gf.fetch });
        const got = collect(es);
        await until(`a snapshot for ${id}`, () => got.length >= 1);
        es.close();
        assert.equal(gf.calls[0].lastEventId, id);
        assert.equal(got[0].type, 'snapshot', id);
        assert.equal(got[0].data.reset, true, id);
        assert.equal(got[0].id, `${epoch}:2`, id);
        assert.deepEqual(got[0].data.state.agents.map((a: any) => a.id), ['a', 'b'], id);
      }
      // the same with the query parameter
      const es = new EventSource(srv.url + '/stream?lastEventId=' + encodeURIComponent('other:1'));
      const got = collect(es);
      await until('a snapshot', () => got.length >= 1);
      es.close();
      assert.equal(got[0].data.reset, true);
    } finally {
      await srv.close();
    }
  });

  test('a first connect with ?lastEventId= replays from there (and a later resume uses the header, not the query)', async () => {
    const srv = await inProcess();
    const sockets: Socket[] = [];
    srv.server.on('request', (req) => {
      if (req.url?.startsWith('/stream')) sockets.push(req.socket);
    });
    try {
      let head = 0;
      for (let i = 0; i < 10; i++) head = await postOne(srv.url, i);
      const gf = gatedFetch();
      const es = new EventSource(`${srv.url}/stream?lastEventId=${srv.store.epoch}:4`, { fetch: gf.fetch });
      const got = collect(es);
      await until('the replay', () => got.length > 0 && pos(got.at(-1)!.id) === head);
      assert.deepEqual(eventIds(got), range(5, head));
      assert.equal(got.filter((g) => g.type === 'snapshot').length, 0, 'a replay, not a snapshot');
      gf.hold();
      sockets.at(-1)!.destroy();
      for (let i = 10; i < 15; i++) head = await postOne(srv.url, i);
      await until('the reconnect attempt', () => gf.calls.length === 2);
      gf.open();
      await until('the resume', () => pos(got.at(-1)!.id) === head);
      es.close();
      assert.deepEqual(eventIds(got), range(5, head));
    } finally {
      await srv.close();
    }
  });

  test('replay from the log (a 5-frame ring, snapshots every 7 events) is exact, with posts racing the seam', async () => {
    const srv = await inProcess({ ringSize: 5, snapshotEvery: 7, sweepEveryMs: 50 });
    const live = new EventSource(srv.url + '/stream');
    const liveGot = collect(live);
    try {
      await until('the live snapshot', () => liveGot.length >= 1);
      let head = 0;
      for (let i = 0; i < 40; i++) head = await postOne(srv.url, i);
      // add a lifetime removal and a reset to the history
      await post(srv.url, { type: 'leave', agent: 'old', ts: Date.now() - 60_000 });
      await until('the sweep', () => liveGot.some((g) => g.type === 'removed'));
      head = (await post(srv.url, [{ type: 'reset' }, { type: 'join', agent: 'after-reset' }])).json.last;
      for (const after of [0, 3, 9, 30]) {
        const es = new EventSource(`${srv.url}/stream?lastEventId=${srv.store.epoch}:${after}`);
        const got = collect(es);
        // keep posting while the replay runs
        const racing = (async () => {
          for (let i = 0; i < 5; i++) head = await postOne(srv.url, 100 + i, `race${after}`);
        })();
        await racing;
        await until(`replay after ${after}`, () => got.length > 0 && pos(got.at(-1)!.id) >= head && pos(liveGot.at(-1)!.id) >= head);
        es.close();
        assert.deepEqual(eventIds(got), range(after + 1, head), `after ${after}: no gap, no duplicate`);
        const liveById = new Map(liveGot.filter((g) => g.type !== 'snapshot').map((g) => [g.id, g.raw]));
        for (const g of got) assert.equal(g.raw, liveById.get(g.id), `frame ${g.id} replayed as it was sent live`);
      }
    } finally {
      live.close();
      await srv.close();
    }
  });

  test('after a restart that starts from a stored snapshot, state and replays are unchanged', async () => {
    const cfg = { ringSize: 5, snapshotEvery: 7, sweepEveryMs: 60_000 };
    let srv = await inProcess(cfg);
    const dataDir = srv.dataDir;
    const live = new EventSource(srv.url + '/stream');
    const liveGot = collect(live);
    let head = 0;
    let original: unknown;
    try {
      await until('the snapshot', () => liveGot.length >= 1);
      for (let i = 0; i < 50; i++) head = await postOne(srv.url, i);
      await until('every frame', () => pos(liveGot.at(-1)!.id) === head);
      original = await (await fetch(srv.url + '/state')).json();
    } finally {
      live.close();
      await srv.close();
    }
    const before = await (async () => {
      const s = await inProcess(cfg, dataDir);
      const st = await (await fetch(s.url + '/state')).json();
      await s.close();
      return st;
    })();
    srv = await inProcess(cfg, dataDir);
    try {
      assert.equal(before.position, head);
      assert.deepEqual(before, original, 'a restart from a snapshot folds to the state before it');
      const lived = new Map(liveGot.filter((g) => g.type === 'event').map((g) => [g.id, g.raw]));
      for (const after of [0, 3, 44, 49]) {
        const es = new EventSource(`${srv.url}/stream?lastEventId=${srv.store.epoch}:${after}`);
        const got = collect(es);
        if (after < head) await until(`replay after ${after}`, () => got.length > 0 && pos(got.at(-1)!.id) === head);
        es.close();
        assert.deepEqual(eventIds(got), range(after + 1, head));
        for (const g of got) assert.equal(g.raw, lived.get(g.id), `frame ${g.id}`);
      }
      // the state the second restart folded equals the state before it
      assert.deepEqual(await (await fetch(srv.url + '/state')).json(), before);
    } finally {
      await srv.close();
    }
  });

  test('a replay longer than maxReplay gets a reset snapshot instead', async () => {
    const srv = await inProcess({ ringSize: 2, maxReplay: 10 });
    try {
      let head = 0;
      for (let i = 0; i < 20; i++) head = await postOne(srv.url, i);
      const es = new EventSource(`${srv.url}/stream?lastEventId=${srv.store.epoch}:1`);
      const got = collect(es);
      await until('a snapshot', () => got.length >= 1);
      es.close();
      assert.equal(got[0].type, 'snapshot');
      assert.equal(got[0].data.reset, true);
      assert.equal(got[0].data.position, head);
    } finally {
      await srv.close();
    }
  });

  test('heartbeats arrive as SSE comments', async () => {
    const srv = await inProcess({ heartbeatMs: 100 });
    try {
      const s = await openSse(srv.url + '/stream');
      await until('three heartbeats', () => s.comments >= 3, 3000);
      s.close();
    } finally {
      await srv.close();
    }
  });

  test('a slow subscriber is disconnected while a normal one receives every frame', async () => {
    const srv = await inProcess({ maxBufferedBytes: 64 * 1024 });
    const normal = new EventSource(srv.url + '/stream');
    const got = collect(normal);
    const port = Number(new URL(srv.url).port);
    const slow = connect(port, '127.0.0.1');
    const slowConnected = new Promise<void>((ok) => slow.once('connect', () => ok()));
    try {
      await until('the normal snapshot', () => got.length >= 1);
      await slowConnected;
      slow.write(`GET /stream HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\naccept: text/event-stream\r\n\r\n`);
      slow.pause(); // and never read
      await until('two subscribers', () => srv.floor.channel.subscriberCount === 2);
      const activity = 'x'.repeat(4000);
      let head = 0;
      let batches = 0;
      while (srv.floor.channel.stats.slowDisconnects === 0 && batches < 60) {
        const r = await post(srv.url, Array.from({ length: 200 }, (_, i) => ({ type: 'status', agent: `s${i % 20}`, activity })));
        assert.equal(r.status, 200);
        head = r.json.last;
        batches++;
        await until('the normal subscriber keeping up', () => pos(got.at(-1)!.id) >= head - 200 * 2, 20_000);
      }
      assert.equal(srv.floor.channel.stats.slowDisconnects, 1, `the slow one was cut (after ${batches} batches)`);
      assert.equal(srv.floor.channel.subscriberCount, 1);
      head = (await post(srv.url, { type: 'status', agent: 'after', activity: 'still live' })).json.last;
      await until('every frame at the normal subscriber', () => pos(got.at(-1)!.id) === head, 20_000);
      assert.deepEqual(eventIds(got), range(got[0].data.position + 1, head));
      // once it reads again, the slow one finds its stream closed by the server
      const closed = new Promise<void>((ok) => slow.once('close', () => ok()));
      slow.on('data', () => {});
      slow.resume();
      await closed;
    } finally {
      slow.destroy();
      normal.close();
      await srv.close();
    }
  });

  test('a subscriber that reads nothing during a paced replay from the log is cut once, after the stall limit, and the server keeps serving', async () => {
    // A replay is written at the reader's pace (test/live.pace.test.ts); a reader that takes nothing at all for `stallMs` is gone, not slow.
    const srv = await inProcess({ maxBufferedBytes: 32 * 1024, ringSize: 5, stallMs: 300 });
    const port = Number(new URL(srv.url).port);
    const slow = connect(port, '127.0.0.1');
    const slowConnected = new Promise<void>((ok) => slow.once('connect', () => ok()));
    try {
      const activity = 'y'.repeat(4000);
      for (let b = 0; b < 6; b++) {
        const r = await post(srv.url, Array.from({ length: 200 }, (_, i) => ({ type: 'status', agent: `r${i % 20}`, activity })));
        assert.equal(r.status, 200);
      }
      await slowConnected;
      slow.write(`GET /stream HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\naccept: text/event-stream\r\nlast-event-id: ${srv.store.epoch}:1\r\n\r\n`);
      slow.pause();
      await until('the slow replay to be cut', () => srv.floor.channel.stats.slowDisconnects > 0);
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(srv.floor.channel.stats.slowDisconnects, 1);
      assert.equal(srv.floor.channel.subscriberCount, 0);
      const h = await (await fetch(srv.url + '/health')).json();
      assert.equal(h.ok, true);
      assert.equal((await post(srv.url, { type: 'join', agent: 'still-here' })).status, 200);
    } finally {
      slow.destroy();
      await srv.close();
    }
  });
});

describe('child server restart', { timeout: 40_000 }, () => {
  test('replay across a restart on the same data dir and port is exact', async () => {
    const dataDir = tempDir();
    let srv = await child({ dataDir, env: { ROOST_HEARTBEAT_MS: '200' } });
    const gf = gatedFetch();
    const es = new EventSource(srv.url + '/stream', { fetch: gf.fetch });
    const got = collect(es);
    try {
      await until('the snapshot', () => got.length >= 1);
      let head = 0;
      for (let i = 0; i < 15; i++) head = await postOne(srv.url, i);
      await until('frames before the restart', () => got.length > 0 && pos(got.at(-1)!.id) === head);
      const epoch = epochOf(got[0].id);
      gf.hold();
      await srv.stop('SIGTERM');
      await until('the reconnect attempt', () => gf.calls.length >= 2);
      srv = await child({ dataDir, port: srv.port, env: { ROOST_HEARTBEAT_MS: '200' } });
      for (let i = 15; i < 40; i++) head = await postOne(srv.url, i);
      gf.open();
      await until('the resume', () => pos(got.at(-1)!.id) === head, 15_000);
      for (let i = 40; i < 45; i++) head = await postOne(srv.url, i);
      await until('live after the resume', () => pos(got.at(-1)!.id) === head);
      assert.equal(gf.calls.at(-1)!.lastEventId, `${epoch}:15`);
      assert.equal(got.filter((g) => g.type === 'snapshot').length, 1, 'the restart cost no snapshot');
      assert.ok(got.every((g) => epochOf(g.id) === epoch), 'the epoch survives a restart');
      assert.deepEqual(eventIds(got), range(1, head));
      // the frames after the restart are those a full replay from the start gives
      const full = new EventSource(`${srv.url}/stream?lastEventId=${epoch}:0`);
      const fullGot = collect(full);
      await until('the full replay', () => fullGot.length > 0 && pos(fullGot.at(-1)!.id) === head);
      full.close();
      assert.deepEqual(
        fullGot.map((g) => g.raw),
        got.filter((g) => g.type !== 'snapshot').map((g) => g.raw),
      );
    } finally {
      es.close();
      await srv.stop();
    }
  });
});
