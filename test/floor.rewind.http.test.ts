// GET /rewind (docs/floor.md, "Rewind") over real HTTP in shared mode: the
// floor at a past position is the shared fold of the log's prefix, started
// from the nearest kept snapshot (snapshots every 5 events here, so most
// rewinds start from one); `at` may be an ISO time; a viewer of another
// project cannot rewind this one; the fleet board rewinds the same way.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { applyEvent, emptyFloor, floorToJSON, type FloorEvent } from '../src/core/floor.js';
import { call, makeUser, mintToken, sharedServer, type Caller, type SharedServer } from './support/shared.js';

describe('rewind in shared mode', () => {
  let srv: SharedServer;
  let dan: Caller;
  let betaViewer: Caller;
  let editor: Caller;
  /** Append time of the log's entries, by position, as the server stored them. */
  const times: number[] = [];
  before(async () => {
    srv = await sharedServer({ snapshotEvery: 5 });
    const made = await call(srv.url, srv.owner, 'POST', '/projects', { id: 'beta' });
    assert.ok(made.status === 201 || made.status === 200, JSON.stringify(made.json));
    dan = await makeUser(srv, 'dan', 'default', 'viewer');
    betaViewer = await makeUser(srv, 'bea', 'beta', 'viewer');
    editor = await mintToken(srv, srv.owner, 'default', 'editor');
    const beta = await mintToken(srv, srv.owner, 'beta', 'editor');
    const post = async (tok: Caller, ev: object) => {
      const r = await call(srv.url, tok, 'POST', '/events', ev);
      assert.equal(r.status, 200, JSON.stringify(r.json));
    };
    await post(editor, { type: 'join', agent: 'a1', team: 'pay', status: 'working' });
    await post(editor, { type: 'join', agent: 'b2', team: 'web', status: 'working' });
    for (let i = 0; i < 30; i++) {
      await post(editor, { type: 'tool', agent: i % 2 ? 'a1' : 'b2', tool: 'Edit', activity: `Editing step ${i}` });
      if (i === 12) await post(editor, { type: 'status', agent: 'a1', status: 'waiting', activity: 'Allow Bash: deploy?' });
      if (i === 13) await new Promise((r) => setTimeout(r, 30)); // a gap in time to rewind to
    }
    await post(editor, { type: 'status', agent: 'a1', status: 'done', activity: 'shipped' });
    await post(beta, { type: 'join', agent: 'z9', team: 'pay', status: 'working' });
    // The floor folds what it appended (and stores its snapshots as it goes): wait for it to reach the head.
    const head = await srv.store.head('floor');
    while (srv.floor.position < head) await new Promise((r) => setTimeout(r, 10));
    for (const e of await srv.store.read('floor', 0)) times[e.position] = e.at;
  });
  after(async () => {
    await srv?.close();
  });

  /** The shared fold of the log's first `p` entries, from nothing. */
  async function foldPrefix(p: number) {
    const s = emptyFloor();
    for (const e of await srv.store.read('floor', 0, p)) applyEvent(s, JSON.parse(e.body) as FloorEvent);
    return floorToJSON(s);
  }
  const floorOf = (j: any) => ({ agents: j.agents, teams: j.teams, messages: j.messages });

  test('the floor at a past position is the fold of the log up to it', async () => {
    const head = await srv.store.head('floor');
    assert.ok(head >= 33, `head ${head}`);
    assert.ok(await srv.store.getSnapshot('floor', 6), 'kept snapshots exist near the start (the floor keeps every one)');
    for (const p of [0, 1, 2, 4, 5, 6, 11, 15, 16, 17, head - 1, head]) {
      const r = await call(srv.url, dan, 'GET', `/rewind?at=${p}`);
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.equal(r.json.position, p);
      assert.equal(r.json.head, head);
      assert.equal(r.json.at, p === 0 ? null : times[p]);
      const want = await foldPrefix(p);
      assert.deepEqual(floorOf(r.json), floorOf(want), `position ${p}`);
    }
    // Waiting in the past, done now: what the slider shows.
    const waitingAt = (await srv.store.read('floor', 0)).find((e) => e.body.includes('"waiting"'))!.position;
    const then = await call(srv.url, dan, 'GET', `/rewind?at=${waitingAt}`);
    assert.equal(then.json.agents.find((a: any) => a.id === 'a1').status, 'waiting');
    const now = await call(srv.url, dan, 'GET', `/rewind?at=${head}`);
    assert.equal(now.json.agents.find((a: any) => a.id === 'a1').status, 'done');
    // Past the head: the head.
    assert.equal((await call(srv.url, dan, 'GET', `/rewind?at=${head + 1000}`)).json.position, head);
  });

  test('at may be a time: the last entry appended at or before it', async () => {
    const p = 17;
    const iso = new Date(times[p]).toISOString();
    const r = await call(srv.url, dan, 'GET', `/rewind?at=${encodeURIComponent(iso)}`);
    assert.equal(r.status, 200, JSON.stringify(r.json));
    // Entries of the same millisecond all count: the last of them.
    let want = p;
    while (times[want + 1] !== undefined && times[want + 1] <= times[p]) want++;
    assert.equal(r.json.position, want);
    assert.deepEqual(floorOf(r.json), floorOf(await foldPrefix(want)));
    const before = await call(srv.url, dan, 'GET', `/rewind?at=${encodeURIComponent(new Date(times[1] - 60_000).toISOString())}`);
    assert.equal(before.json.position, 0, 'before the first entry: the empty floor');
    assert.deepEqual(before.json.agents, []);
    for (const bad of ['', 'yesterday-ish', 'x'.repeat(65), '-3']) {
      assert.equal((await call(srv.url, dan, 'GET', `/rewind?at=${encodeURIComponent(bad)}`)).status, 400, bad);
    }
  });

  test('a viewer of another project cannot rewind this one; nobody can unsigned', async () => {
    assert.equal((await call(srv.url, betaViewer, 'GET', '/rewind?at=5&project=default')).status, 403);
    const own = await call(srv.url, betaViewer, 'GET', '/rewind?at=1&project=beta');
    assert.equal(own.status, 200);
    assert.deepEqual(own.json.agents.map((a: any) => a.id), ['z9'], 'their own floor only');
    assert.equal((await call(srv.url, {}, 'GET', '/rewind?at=5')).status, 401);
    assert.equal((await call(srv.url, betaViewer, 'GET', '/fleet/t1/rewind?at=1&project=default')).status, 403);
  });

  test('a fleet board rewinds the same way', async () => {
    const spawn = { type: 'session.spawn', id: 's1', session: 'fix-refunds', flavor: 'scoped' };
    const r1 = await call(srv.url, editor, 'POST', '/fleet/t1', spawn);
    assert.ok(r1.status < 300, JSON.stringify(r1.json));
    const r2 = await call(srv.url, editor, 'POST', '/fleet/t1', { type: 'session.end', id: 's1', reason: 'closed' });
    assert.ok(r2.status < 300, JSON.stringify(r2.json));
    const then = await call(srv.url, dan, 'GET', '/fleet/t1/rewind?at=1');
    assert.equal(then.status, 200, JSON.stringify(then.json));
    assert.equal(then.json.position, 1);
    assert.equal(then.json.sessions.length, 1);
    assert.notEqual(then.json.sessions[0].state, 'ended');
    const now = await call(srv.url, dan, 'GET', '/fleet/t1/rewind?at=2');
    assert.equal(now.json.sessions[0].state, 'ended');
  });
});
