// One live connection carrying many scopes (`GET /live?s=...`, the mux form of
// src/core/live-wire.ts), against a real server: every scope's frames carry
// the same data as its single-scope stream; each scope resumes from its own
// cursor exactly; a malformed, unknown or unreadable scope is closed alone;
// the connection counts once toward the per-caller limit and has one
// heartbeat; access changes close exactly the scopes they take away.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { inProcess, post } from './support/server.js';
import { openSse, type SseReader } from './support/sse.js';
import { call, headersOf, login, makeUser, mintToken, refused, sharedServer, stream, type Caller, type SharedServer } from './support/shared.js';
import { LIVE_PROTOCOL_VERSION, MAX_LIVE_SCOPES, parseScopeParam, scopeParam, type MuxFrame } from '../src/core/live-wire.js';
import { Frame } from '../src/server/live/index.js';

type Srv = Awaited<ReturnType<typeof inProcess>>;

function mux(url: string, scopes: string[], who: Caller = {}): Promise<SseReader> {
  return openSse(`${url}/live?${scopes.map((s) => 's=' + encodeURIComponent(s)).join('&')}`, headersOf(who, url));
}

/** The mux frames a reader has seen (the connection's own `error` frame is not one). */
function frames(r: SseReader): MuxFrame<any>[] {
  return r.frames.filter((f) => f.event === 'message').map((f) => JSON.parse(f.data) as MuxFrame<any>);
}

async function waitMux(r: SseReader, pred: (f: MuxFrame<any>) => boolean, ms = 5000): Promise<MuxFrame<any>> {
  const f = await r.waitFor((x) => x.event === 'message' && pred(JSON.parse(x.data)), ms);
  return JSON.parse(f.data);
}

const pos = (p: string | undefined) => Number(p!.split(':')[1]);

describe('the scope grammar (src/core/live-wire.ts)', () => {
  test('scopes and cursors parse; malformed ones do not', () => {
    assert.deepEqual(parseScopeParam('floor:default'), { scope: 'floor:default', cursor: null });
    assert.deepEqual(parseScopeParam('fleet:default/t1@ep_1:42'), { scope: 'fleet:default/t1', cursor: 'ep_1:42' });
    assert.deepEqual(parseScopeParam('work.live:alpha/s-1:sess.2'), { scope: 'work.live:alpha/s-1:sess.2', cursor: null });
    assert.deepEqual(parseScopeParam('work.private'), { scope: 'work.private', cursor: null });
    assert.deepEqual(parseScopeParam('floor:default@nonsense'), { scope: 'floor:default', cursor: 'invalid' });
    for (const bad of ['', 'Floor:x', 'floor:', 'floor:a b', 'floor:"x"', 'x'.repeat(40), 'floor:' + 'a'.repeat(301)]) assert.equal(parseScopeParam(bad), null, bad);
    assert.equal(scopeParam('floor:default', 'e:3'), 'floor:default@e:3');
    assert.equal(scopeParam('floor:default', null), 'floor:default');
  });

  test('a frame is serialized once per form: every subscription of a form is written the same bytes', () => {
    const f = new Frame(7, { epoch: 'ep', scopeJson: '"work:alpha"' }, [{ name: 'agent.changed', data: '{"id":"a","rev":7}' }], [{ name: 'event', data: '{"event":{"type":"x"},"changes":[]}' }]);
    const single = f.bytes('single');
    const mux = f.bytes('mux');
    assert.equal(f.bytes('single'), single, 'the same Buffer, not a copy');
    assert.equal(f.bytes('mux'), mux);
    assert.equal(single.toString(), 'id: ep:7\nevent: agent.changed\ndata: {"id":"a","rev":7}\n\n');
    assert.equal(mux.toString(), 'data: {"s":"work:alpha","e":"event","p":"ep:7","d":{"event":{"type":"x"},"changes":[]}}\n\n');
    assert.deepEqual(JSON.parse(mux.toString().slice(6)), { s: 'work:alpha', e: 'event', p: 'ep:7', d: { event: { type: 'x' }, changes: [] } });
  });
});

describe('GET /live in local mode', () => {
  let srv: Srv;
  before(async () => {
    srv = await inProcess();
  });
  after(() => srv.close());

  test('hello, then each scope’s snapshot, then live frames whose data is the single-scope frame’s', async () => {
    assert.equal((await fetch(srv.url + '/fleet/t1', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'session.spawn', id: 's1', session: 'x', flavor: 'plain', root: '~/r' }) })).status, 200);
    const scopes = ['floor:default', 'approvals:default', 'fleet:default/t1', 'work:default'];
    const m = await mux(srv.url, scopes);
    const single = await openSse(srv.url + '/stream');
    try {
      const hello = await waitMux(m, (f) => f.e === 'hello');
      assert.deepEqual(hello, { s: '', e: 'hello', d: { protocol: LIVE_PROTOCOL_VERSION, epoch: srv.store.epoch } });
      for (const s of scopes) {
        const snap = await waitMux(m, (f) => f.s === s && f.e === 'snapshot');
        assert.match(snap.p!, new RegExp(`^${srv.store.epoch}:\\d+$`));
        assert.equal(snap.d.position, pos(snap.p), `${s}: the snapshot's position is its cursor`);
      }
      assert.equal(frames(m)[0].e, 'hello', 'hello comes first');
      await single.waitFor((f) => f.event === 'snapshot');
      const r = await post(srv.url, { type: 'status', agent: 'mux-1', status: 'working', activity: 'hi' });
      const ev = await waitMux(m, (f) => f.s === 'floor:default' && f.e === 'event');
      assert.equal(pos(ev.p), r.json.last);
      const same = await single.waitFor((f) => f.event === 'event');
      assert.deepEqual(ev.d, JSON.parse(same.data), 'the same data as /stream');
      assert.equal(same.id, ev.p);
      // The fleet board's durable and lossy frames.
      await fetch(srv.url + '/fleet/t1', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'session.status', id: 's1', state: 'running' }) });
      const fe = await waitMux(m, (f) => f.s === 'fleet:default/t1' && f.e === 'event');
      assert.equal(fe.d.event.type, 'session.status');
      const relay = await fetch(srv.url + '/fleet/t1/live', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ type: 'session.stream', id: 's1', text: 'partial' }) });
      assert.equal(relay.status, 200);
      const lossy = await waitMux(m, (f) => f.s === 'fleet:default/t1' && f.e === 'live');
      assert.equal(lossy.p, undefined, 'a lossy frame has no cursor');
      assert.equal(lossy.d.text, 'partial');
    } finally {
      m.close();
      single.close();
    }
  });

  test('Work: the mux form carries each event and its changes; /api/v2/events keeps the *.changed families', async () => {
    const m = await mux(srv.url, ['work:default', 'work.private', 'work.live:default']);
    const single = await openSse(srv.url + '/api/v2/events?project=default');
    try {
      await waitMux(m, (f) => f.s === 'work:default' && f.e === 'snapshot');
      await waitMux(m, (f) => f.s === 'work.private' && f.e === 'snapshot');
      const presence = await waitMux(m, (f) => f.s === 'work.live:default' && f.e === 'presence');
      assert.deepEqual(
        presence.d.people.map((p: any) => p.uid),
        ['local'],
        'holding work:default makes me present',
      );
      await waitMux(m, (f) => f.s === 'work.live:default' && f.e === 'role' && f.d.role === 'owner');
      await single.waitFor((f) => f.event === 'snapshot');
      const made = await fetch(srv.url + '/api/v2/conversations?project=default', { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() }, body: JSON.stringify({ title: 'Plans' }) });
      const id = ((await made.json())).id;
      const ev = await waitMux(m, (f) => f.s === 'work:default' && f.e === 'event');
      assert.equal(ev.d.event.type, 'conversation.created');
      assert.equal(ev.d.event.id, id);
      assert.deepEqual(ev.d.changes, [{ family: 'conversation', id }]);
      const changed = await single.waitFor((f) => f.event === 'conversation.changed');
      assert.deepEqual(JSON.parse(changed.data), { id, rev: pos(ev.p) });
      assert.equal(changed.id, ev.p);
      const general = await fetch(srv.url + '/api/v2/conversations/general/messages', { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() }, body: JSON.stringify({ text: 'note to self' }) });
      assert.equal(general.status, 200);
      const priv = await waitMux(m, (f) => f.s === 'work.private' && f.e === 'event');
      assert.equal(priv.d.event.text, 'note to self');
    } finally {
      m.close();
      single.close();
    }
  });

  test('each scope resumes from its own cursor exactly; a foreign or malformed cursor gets a reset snapshot', async () => {
    const m = await mux(srv.url, ['floor:default', 'approvals:default']);
    const snap = await waitMux(m, (f) => f.s === 'floor:default' && f.e === 'snapshot');
    const aSnap = await waitMux(m, (f) => f.s === 'approvals:default' && f.e === 'snapshot');
    m.close();
    const from = pos(snap.p);
    let head = 0;
    for (let i = 0; i < 5; i++) head = (await post(srv.url, { type: 'status', agent: `r${i}`, status: 'idle' })).json.last;
    const again = await mux(srv.url, [`floor:default@${snap.p}`, `approvals:default@${aSnap.p}`, `fleet:default/t1@other-epoch:1`, 'fleet:default/t2@garbage']);
    try {
      await waitMux(again, (f) => f.s === 'floor:default' && pos(f.p) === head);
      const floor = frames(again).filter((f) => f.s === 'floor:default');
      assert.deepEqual(
        floor.map((f) => [f.e, pos(f.p)]),
        Array.from({ length: head - from }, (_, i) => ['event', from + 1 + i]),
        'the missed frames, in order, no snapshot',
      );
      for (const s of ['fleet:default/t1', 'fleet:default/t2']) {
        const f = await waitMux(again, (x) => x.s === s);
        assert.equal(f.e, 'snapshot');
        assert.equal(f.d.reset, true, `${s}: reset`);
      }
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(frames(again).filter((f) => f.s === 'approvals:default').length, 0, 'nothing new in approvals: nothing sent');
    } finally {
      again.close();
    }
  });

  test('a malformed list is a 400; a bad, unknown or unopenable scope is closed alone', async () => {
    for (const q of ['', 's=floor:default&s=floor:default', Array.from({ length: MAX_LIVE_SCOPES + 1 }, (_, i) => `s=floor:p${i}`).join('&')]) {
      const r = await fetch(`${srv.url}/live?${q}`);
      assert.equal(r.status, 400, q.slice(0, 60));
      assert.equal(((await r.json())).kind, 'bad_request');
    }
    const m = await mux(srv.url, ['floor:default', 'Bad Scope', 'nope:x', 'work:no-such-project', 'floor:UPPER', 'work.live:default/no-such-agent']);
    try {
      const closed: Record<string, number> = {};
      for (const s of ['Bad Scope', 'nope:x', 'work:no-such-project', 'floor:UPPER', 'work.live:default/no-such-agent']) {
        const c = await waitMux(m, (f) => f.s === s && f.e === 'closed');
        closed[s] = c.d.status;
        assert.equal(typeof c.d.reason, 'string');
      }
      assert.deepEqual(closed, { 'Bad Scope': 400, 'nope:x': 404, 'work:no-such-project': 404, 'floor:UPPER': 400, 'work.live:default/no-such-agent': 404 });
      await waitMux(m, (f) => f.s === 'floor:default' && f.e === 'snapshot');
      const r = await post(srv.url, { type: 'status', agent: 'after-bad', status: 'idle' });
      const ev = await waitMux(m, (f) => f.s === 'floor:default' && f.e === 'event');
      assert.equal(pos(ev.p), r.json.last, 'the good scope goes on');
    } finally {
      m.close();
    }
  });

  test('one heartbeat per connection, whatever its number of scopes', async () => {
    const quick = await inProcess({ heartbeatMs: 100 });
    try {
      const m = await mux(quick.url, ['floor:default', 'approvals:default', 'fleet:default/h', 'work:default']);
      await waitMux(m, (f) => f.s === 'work:default' && f.e === 'snapshot');
      const c0 = m.comments;
      await new Promise((r) => setTimeout(r, 1000));
      const beats = m.comments - c0;
      assert.ok(beats >= 5 && beats <= 12, `${beats} heartbeats in a second at one per 100 ms`);
      m.close();
    } finally {
      await quick.close();
    }
  });
});

describe('GET /live in shared mode', () => {
  let srv: SharedServer;
  let bob: Caller;
  before(async () => {
    srv = await sharedServer({ streamsPerCaller: 3 });
    assert.equal((await call(srv.url, srv.owner, 'POST', '/projects', { id: 'side' })).status, 201);
    bob = await makeUser(srv, 'bob', 'default', 'editor');
  });
  after(() => srv.close());

  test('nobody gets 401; each scope is authorized on its own', async () => {
    assert.equal(await refused(srv.url, {}, '/live?s=floor:default'), 401);
    const m = await mux(srv.url, ['floor:default', 'floor:side', 'work:side', 'approvals:side'], bob);
    try {
      for (const s of ['floor:side', 'work:side', 'approvals:side']) {
        const c = await waitMux(m, (f) => f.s === s && f.e === 'closed');
        assert.equal(c.d.status, 403, s);
        assert.match(c.d.reason, /not a member of project "side"/);
      }
      await waitMux(m, (f) => f.s === 'floor:default' && f.e === 'snapshot');
    } finally {
      m.close();
    }
  });

  test('a mux connection counts once toward the per-caller limit', async () => {
    const tok = await mintToken(srv, bob, 'default', 'viewer');
    const a = await mux(srv.url, ['floor:default', 'approvals:default', 'fleet:default/t', 'work:default'], tok);
    const b = await mux(srv.url, ['floor:default', 'work.live:default'], tok);
    const c = await stream(srv.url, tok, '/stream');
    try {
      await waitMux(a, (f) => f.s === 'work:default' && f.e === 'snapshot');
      assert.equal(await refused(srv.url, tok, '/live?s=floor:default'), 429);
      assert.equal(await refused(srv.url, tok, '/approvals/stream'), 429);
    } finally {
      for (const x of [a, b, c]) x.close();
    }
  });

  test('removal closes that project’s scopes and nothing else; demotion keeps them and says the new role', async () => {
    const carol = await makeUser(srv, 'carol', 'default', 'editor');
    assert.equal((await call(srv.url, srv.owner, 'PUT', `/projects/side/members/${carol.uid}`, { role: 'editor' })).status, 200);
    const m = await mux(srv.url, ['floor:default', 'floor:side', 'work:side', 'work.live:side', 'work.live:default', 'approvals:default', 'members:default', 'members:side'], carol);
    try {
      await waitMux(m, (f) => f.s === 'work.live:side' && f.e === 'role');
      // members:<project>: the whole list when it opens, and again at each change.
      const listed = await waitMux(m, (f) => f.s === 'members:default' && f.e === 'members');
      assert.equal(listed.d.members.find((x: { uid: string }) => x.uid === carol.uid)?.role, 'editor');
      await waitMux(m, (f) => f.s === 'members:side' && f.e === 'members');
      await waitMux(m, (f) => f.s === 'floor:default' && f.e === 'snapshot');
      const down = await call(srv.url, srv.owner, 'PUT', `/projects/default/members/${carol.uid}`, { role: 'viewer' });
      assert.equal(down.status, 200);
      const role = await waitMux(m, (f) => f.s === 'work.live:default' && f.e === 'role' && f.d.role === 'viewer');
      assert.equal(role.d.project, 'default');
      await waitMux(m, (f) => f.s === 'members:default' && f.e === 'members' && f.d.members.some((x: { uid: string; role: string }) => x.uid === carol.uid && x.role === 'viewer'));
      const gone = await call(srv.url, srv.owner, 'DELETE', `/projects/side/members/${carol.uid}`);
      assert.equal(gone.status, 200);
      for (const s of ['floor:side', 'work:side', 'work.live:side', 'members:side']) {
        const c = await waitMux(m, (f) => f.s === s && f.e === 'closed', 2000);
        assert.equal(c.d.status, 403);
        assert.match(c.d.reason, /no longer a member of project "side"/);
      }
      const r = await call(srv.url, srv.owner, 'POST', '/events', { type: 'status', agent: 'still-live', status: 'idle' });
      const ev = await waitMux(m, (f) => f.s === 'floor:default' && f.e === 'event');
      assert.equal(pos(ev.p), r.json.last);
      assert.ok(!frames(m).some((f) => f.e === 'closed' && !f.s.endsWith('side')), 'nothing of project default was closed');
      assert.ok(!m.frames.some((f) => f.event === 'error'));
    } finally {
      m.close();
    }
  });

  test('a revoked token and a sign-out end the whole connection', async () => {
    const dan = await makeUser(srv, 'dan', 'default', 'editor');
    const tok = await mintToken(srv, dan, 'default', 'viewer');
    const elsewhere = await login(srv.url, 'dan', 'dan-password');
    const byToken = await mux(srv.url, ['floor:default', 'work:default'], tok);
    const byCookie = await mux(srv.url, ['floor:default', 'approvals:default'], elsewhere);
    await waitMux(byToken, (f) => f.s === 'work:default' && f.e === 'snapshot');
    await waitMux(byCookie, (f) => f.s === 'approvals:default' && f.e === 'snapshot');
    assert.equal((await call(srv.url, dan, 'DELETE', `/tokens/${tok.tokenId}`)).status, 200);
    const e1 = await byToken.waitFor((f) => f.event === 'error', 2000);
    assert.match(JSON.parse(e1.data).reason, /revoked/);
    await byToken.ended;
    assert.equal((await call(srv.url, elsewhere, 'POST', '/auth/logout')).status, 200);
    const e2 = await byCookie.waitFor((f) => f.event === 'error', 2000);
    assert.match(JSON.parse(e2.data).reason, /signed out/);
    await byCookie.ended;
  });
});
