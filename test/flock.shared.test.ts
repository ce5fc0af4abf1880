// The flock in shared mode: the requester is the signed-in member (or the
// token's owner), never the body's word; the decider of a verdict is the
// caller; roles gate the routes (a viewer reads and watches, an editor hands
// over lists and decides, an owner demotes).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { call, makeUser, mintToken, refused, sharedServer, stream, type Caller, type SharedServer } from './support/shared.js';
import { flockModel, type FlockModel } from './support/flock-model.js';

let srv: SharedServer;
let model: FlockModel;
let bob: Caller;
let vic: Caller;

before(async () => {
  model = await flockModel('anthropic');
  srv = await sharedServer({ models: model.roster(), flockBanterWaitMs: 1000 });
  bob = await makeUser(srv, 'bob', 'default', 'editor');
  vic = await makeUser(srv, 'vic', 'default', 'viewer');
});
after(async () => {
  await srv.close();
  await model.close();
});

test('shared mode: the requester is the caller, the decider is the caller, roles gate the routes', async () => {
  const r = await call(srv.url, bob, 'POST', '/api/lists', { text: 'write the shared note', requester: 'mallory' });
  assert.equal(r.status, 202, JSON.stringify(r.json));
  const list_id = r.json.list_id as string;
  // A viewer reads and watches, and may not hand over lists or decide.
  assert.equal((await call(srv.url, vic, 'POST', '/api/lists', { text: 'write it', requester: 'vic' })).status, 403);
  const w = await stream(srv.url, vic, `/api/events?list_id=${list_id}`);
  const started = await w.waitFor((f) => f.event === 'list.started');
  assert.equal(JSON.parse(started.data).requester, 'Bob', "the caller's name, not the body's");
  await w.waitFor((f) => f.event === 'item.triaged');
  const item = `${list_id}-1`;
  assert.equal((await call(srv.url, vic, 'POST', '/api/verdicts', { item_id: item, target: 'triage', approve: true })).status, 403);
  assert.equal((await call(srv.url, bob, 'POST', '/api/verdicts', { item_id: item, target: 'triage', approve: true, by: 'someone else' })).status, 204);
  const v = await w.waitFor((f) => f.event === 'verdict');
  assert.equal(JSON.parse(v.data).by, 'Bob');
  // A token acts for its owner.
  const tok = await mintToken(srv, srv.owner, 'default', 'editor');
  const t = await call(srv.url, tok, 'POST', '/api/lists', { text: 'write the token note', requester: 'mallory' });
  assert.equal(t.status, 202);
  const w2 = await stream(srv.url, tok, `/api/events?list_id=${t.json.list_id}`);
  assert.notEqual(JSON.parse((await w2.waitFor((f) => f.event === 'list.started')).data).requester, 'mallory');
  w2.close();
  // The ledger is read by a viewer; only an owner demotes.
  assert.equal((await call(srv.url, vic, 'GET', '/api/trust')).status, 200);
  assert.equal((await call(srv.url, bob, 'POST', '/api/trust', { holder: 'flock', task_type: 'writing', action: 'reset', reason: 'no' })).status, 403);
  assert.equal((await call(srv.url, srv.owner, 'POST', '/api/trust', { holder: 'flock', task_type: 'writing', action: 'reset', reason: 'no' })).status, 409);
  // Nobody at all: 401.
  assert.equal((await call(srv.url, {}, 'GET', '/api/trust')).status, 401);
  w.close();
});

test('shared mode, nests: an editor posts as "member:<name>" from the transport; a project\'s nests are its members\' alone', async () => {
  // An editor creates a nest and posts as themselves (flock.nests.people.test.ts: who may post as whom); a viewer reads and watches but may not post.
  const n = await call(srv.url, bob, 'POST', '/api/nests', { name: 'Shared room', crows: ['Hugin'] });
  assert.equal(n.status, 201, JSON.stringify(n.json));
  assert.equal((await call(srv.url, vic, 'POST', '/api/nests', { name: 'Viewer room', crows: ['Hugin'] })).status, 403);
  const m = await call(srv.url, bob, 'POST', '/api/nests/shared-room/messages', { author: 'member:Bob', text: 'hello room' });
  assert.equal(m.status, 201, JSON.stringify(m.json));
  assert.equal(m.json.author, 'member:Bob');
  assert.equal((await call(srv.url, vic, 'POST', '/api/nests/shared-room/messages', { author: 'owner', text: 'me too' })).status, 403);
  const read = await call(srv.url, vic, 'GET', '/api/nests/shared-room/messages');
  assert.equal(read.status, 200);
  assert.deepEqual(read.json.map((r: { text: string }) => r.text), ['hello room']);
  const w = await stream(srv.url, vic, '/api/events?nest_id=shared-room');
  assert.equal(JSON.parse((await w.waitFor((f) => f.event === 'nest.message')).data).msg_id, 'shared-room-1');
  w.close();
  // The log keeps the person behind the label.
  const entries = await srv.store.read('flock', 0, 10_000);
  const posted = entries.map((e) => JSON.parse(e.body) as Record<string, unknown>).find((b) => b.type === 'nest.message' && b.msg_id === 'shared-room-1');
  assert.equal(posted?.by, 'Bob');
  // Someone of another project sees that project's nests only.
  assert.equal((await call(srv.url, srv.owner, 'POST', '/projects', { id: 'side', name: 'Side' })).status, 201);
  const sam = await makeUser(srv, 'sam', 'side', 'editor');
  assert.equal((await call(srv.url, sam, 'GET', '/api/nests?project=default')).status, 403);
  assert.equal((await call(srv.url, sam, 'GET', '/api/nests/shared-room/messages?project=default')).status, 403);
  assert.equal(await refused(srv.url, sam, '/api/events?nest_id=shared-room&project=default'), 403);
  const side = await call(srv.url, sam, 'GET', '/api/nests?project=side');
  assert.deepEqual(side.json.nests.map((x: { nest_id: string }) => x.nest_id), ['todo']);
  assert.equal((await call(srv.url, sam, 'GET', '/api/nests/shared-room/messages?project=side')).status, 404);
});
