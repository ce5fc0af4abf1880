// Nests and their messages over real HTTP and SSE (spec/flock-events.md,
// "Nests" and "Nest messages"; issue 14, parts 1 and 2): creating nests and
// their guardrails, the core-first then borrowed crows of a list in a nest,
// posting messages (every status code and message of the contract), the
// record exactly, tagging (Jev's rule: flock.jev.test.ts), and the nest's
// stream with id: lines and Last-Event-ID replay in msg_id order.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { inProcess } from './support/server.js';
import { flockModel, type FlockModel } from './support/flock-model.js';
import { flockClient, type FlockClient } from './support/flock-client.js';
import { openSse } from './support/sse.js';
import type { Roost } from '../src/server/index.js';

const RECORD = ['approval_phrase', 'author', 'invited', 'kind', 'mode', 'mode_tagged_by', 'msg_id', 'nest_id', 'refers_to', 'resolved', 'tagged_by', 'text', 'to', 'ts'];

describe('nests and messages', () => {
  let model: FlockModel;
  let roost: Roost;
  let c: FlockClient;
  before(async () => {
    model = await flockModel('anthropic');
    roost = await inProcess({ models: model.roster(), flockBanterWaitMs: 500 });
    c = flockClient(roost.url);
  });
  after(async () => {
    await roost.close();
    await model.close();
  });
  const say = (nest: string, body: Record<string, unknown>) => c.post(`/api/nests/${nest}/messages`, body);

  test('GET /api/nests: the roster is the eight working crows; todo exists with an empty core', async () => {
    const r = await c.get('/api/nests');
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.roster, ['Hugin', 'Munin', 'Pepper', 'Inky', 'Corvin', 'Sable', 'Tansy', 'Rook']);
    assert.deepEqual(r.body.nests, [{ nest_id: 'todo', name: 'todo', crows: [] }]);
  });

  test('POST /api/nests: 201 with the slug; 400 {message} for bad input; 409 on a clash; at most 20, todo counted', async () => {
    const r = await c.post('/api/nests', { name: '  Launch   copy ', crows: ['Pepper', 'Inky'] });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual(r.body, { nest_id: 'launch-copy', name: 'Launch copy', crows: ['Pepper', 'Inky'] });
    const clash = await c.post('/api/nests', { name: 'LAUNCH copy!', crows: ['Hugin'] });
    assert.equal(clash.status, 409);
    assert.match(clash.body.message, /launch-copy/);
    assert.equal((await c.post('/api/nests', { name: 'Todo', crows: ['Hugin'] })).status, 409, 'todo is taken from the start');
    for (const [body, re] of [
      [{ name: '   ', crows: ['Hugin'] }, /name/],
      [{ name: 'x'.repeat(41), crows: ['Hugin'] }, /name/],
      [{ name: '!!!', crows: ['Hugin'] }, /name/],
      [{ name: 'Empty', crows: [] }, /crows/],
      [{ name: 'Dupes', crows: ['Hugin', 'Hugin'] }, /crows/],
      [{ name: 'Service', crows: ['Quill'] }, /crows/],
      [{ name: 'Stranger', crows: ['Nobody'] }, /crows/],
      [{ name: 'Nine', crows: ['Hugin', 'Munin', 'Pepper', 'Inky', 'Corvin', 'Sable', 'Tansy', 'Rook', 'Hugin'] }, /crows/],
      [{ crows: ['Hugin'] }, /name/],
    ] as const) {
      const b = await c.post('/api/nests', body);
      assert.equal(b.status, 400, JSON.stringify(body));
      assert.match(b.body.message, re);
    }
    assert.equal((await c.post('/api/nests', { name: 'x'.repeat(40), crows: ['Hugin', 'Munin', 'Pepper', 'Inky', 'Corvin', 'Sable', 'Tansy', 'Rook'] })).status, 201, '40 characters and 8 crows');
    for (let i = 3; i <= 19; i++) assert.equal((await c.post('/api/nests', { name: `Room ${i}`, crows: ['Rook'] })).status, 201);
    const full = await c.post('/api/nests', { name: 'One too many', crows: ['Rook'] });
    assert.equal(full.status, 400);
    assert.match(full.body.message, /20 nests, todo included/);
    const idx = (await c.get('/api/nests')).body;
    assert.equal(idx.nests.length, 20);
    assert.equal(idx.nests[0].nest_id, 'todo');
    assert.deepEqual(idx.nests[1], { nest_id: 'launch-copy', name: 'Launch copy', crows: ['Pepper', 'Inky'] });
  });

  test('a list in a nest: list.started carries nest_id; crows core-first, then borrowed', async () => {
    const list_id = await c.start('murder a tagline for the launch', 'ann', { nest_id: 'launch-copy' });
    const w = await c.watch(list_id);
    assert.equal((await w.next('list.started')).data.nest_id, 'launch-copy');
    const item = `${list_id}-1`;
    await w.next('item.triaged', (d) => d.item_id === item);
    assert.equal((await c.verdict(item, 'triage', true)).status, 204);
    await w.next('item.answered', (d) => d.item_id === item);
    const flights = w.events().filter((e) => e.event === 'crow.flying' && e.data.crow !== 'Sentry' && e.data.crow !== 'Elder');
    assert.deepEqual(
      flights.map((e) => [e.data.crow, e.data.borrowed]),
      [
        ['Pepper', false],
        ['Inky', false],
        ['Hugin', true],
      ],
    );
    for (const e of w.events().filter((x) => x.event === 'crow.flying' && (x.data.crow === 'Sentry' || x.data.crow === 'Elder'))) assert.equal(e.data.borrowed, false);
    assert.equal((await c.verdict(item, 'output', true)).status, 204);
    await w.next('list.finished');
    w.close();
  });

  test('messages: 201 with the record exactly; tagged by Jev, header or default; 404, 400 and 403 as the contract says', async () => {
    assert.equal((await c.get('/api/nests/nowhere/messages')).status, 404);
    assert.equal((await say('nowhere', { author: 'owner', text: 'hi' })).status, 404);
    const empty = await c.get('/api/nests/launch-copy/messages');
    assert.deepEqual(empty, { status: 200, body: [] });

    // Jev (the embedded classifier) is sure this is talk; the cases of the rule are test/flock.jev.test.ts.
    const m1 = await say('launch-copy', { author: 'owner', text: '  morning, crows  ' });
    assert.equal(m1.status, 201, JSON.stringify(m1.body));
    assert.deepEqual(Object.keys(m1.body).sort(), RECORD);
    assert.deepEqual({ ...m1.body, ts: '' }, { nest_id: 'launch-copy', ts: '', msg_id: 'launch-copy-1', kind: 'say', author: 'owner', text: 'morning, crows', to: '', refers_to: '', tagged_by: 'jev', mode: '', mode_tagged_by: '', invited: 0, approval_phrase: '', resolved: '' });
    assert.match(m1.body.ts, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);

    const m2 = await say('launch-copy', { author: 'owner', kind: 'request', to: 'Pepper', text: 'draft three taglines', mode: 'conspiracy', invited: 2 });
    assert.equal(m2.status, 201);
    assert.equal(m2.body.msg_id, 'launch-copy-2');
    assert.equal(m2.body.kind, 'request');
    assert.equal(m2.body.tagged_by, 'header');
    assert.equal(m2.body.mode, 'conspiracy');
    assert.equal(m2.body.mode_tagged_by, 'header');
    assert.equal(m2.body.invited, 2);
    assert.equal(m2.body.to, 'Pepper');

    const m3 = await say('launch-copy', { author: 'Pepper', kind: 'claim', text: 'mine', refers_to: 'launch-copy-2', to: 'owner' });
    assert.equal(m3.status, 201);
    assert.equal(m3.body.kind, 'claim');
    assert.equal(m3.body.refers_to, 'launch-copy-2');
    // A crow's ask_owner header is dropped: the message tags as it otherwise would (say, default); its phrase is not kept.
    const m4 = await say('launch-copy', { author: 'Inky', kind: 'ask_owner', text: 'may I ship it?', approval_phrase: 'ship it' });
    assert.equal(m4.status, 201);
    assert.equal(m4.body.kind, 'say');
    assert.equal(m4.body.tagged_by, 'default');
    assert.equal(m4.body.approval_phrase, '');
    // Quill and the Sentry may park an ask_owner (never members); the owner too.
    const ask = await say('launch-copy', { author: 'Quill', kind: 'ask_owner', text: 'Publish the taglines?', approval_phrase: '  Publish   Them ' });
    assert.equal(ask.status, 201);
    assert.equal(ask.body.kind, 'ask_owner');
    assert.equal(ask.body.approval_phrase, 'Publish Them');
    assert.equal(ask.body.resolved, '');
    const yes = await say('launch-copy', { author: 'owner', text: '  publish them ', refers_to: ask.body.msg_id });
    assert.equal(yes.status, 201);
    const afterYes = (await c.get('/api/nests/launch-copy/messages')).body as { msg_id: string; resolved: string }[];
    assert.equal(afterYes.find((r) => r.msg_id === ask.body.msg_id)!.resolved, 'approved', 'resolved is computed at read time');
    assert.equal((await say('launch-copy', { author: 'owner', kind: 'ask_owner', text: 'note to self', approval_phrase: 'done' })).status, 201);

    // 400 {message}: each guardrail.
    for (const [body, re] of [
      [{ author: 'owner', text: '   ' }, /text/],
      [{ author: 'owner', text: 'x'.repeat(2001) }, /text/],
      [{ author: 'owner' }, /text/],
      [{ author: 'mallory', text: 'hi' }, /may not post/],
      [{ author: 'Hugin', text: 'hi' }, /not a member/],
      [{ author: 'Pepper', kind: 'nudge', text: 'go' }, /harness/],
      [{ author: 'Pepper', kind: 'flag', text: 'bad' }, /Sentry/],
      [{ author: 'owner', kind: 'flag', text: 'bad' }, /Sentry/],
      [{ author: 'Pepper', kind: 'shout', text: 'hi' }, /kind/],
      [{ author: 'Quill', text: 'just chatting' }, /ask_owner/],
      [{ author: 'Boss', text: 'hello' }, /may not post/],
      [{ author: 'owner', kind: 'ask_owner', text: 'no phrase' }, /approval_phrase/],
      [{ author: 'owner', text: 'hi', refers_to: 'launch-copy-99' }, /refers_to/],
      [{ author: 'owner', text: 'hi', to: 'nobody' }, /"to"/],
      [{ author: 'owner', kind: 'request', text: 'hi', mode: 'mob' }, /mode/],
    ] as const) {
      const b = await say('launch-copy', body);
      assert.equal(b.status, 400, JSON.stringify(body));
      assert.match(b.body.message, re, JSON.stringify(body));
    }
    // In todo every crow is a member.
    assert.equal((await say('todo', { author: 'Hugin', text: 'hi from todo' })).status, 201);
    assert.equal((await c.get('/api/nests/todo/messages')).body[0].msg_id, 'todo-1');
  });

  test('a quarantined crow: 403 with the contract message', async () => {
    // The Sentry's flag (the watchdog's, part 7) is appended by the server itself; here the service posts it.
    const flock = roost.flock;
    const flag = await flock.postMessage('launch-copy', () => ({ kind: 'flag', author: 'Sentry', to: 'Pepper', refers_to: 'launch-copy-3', text: 'answers_request 0.1', tagged_by: 'jev' }));
    assert.match(flag, /^launch-copy-\d+$/);
    const r = await say('launch-copy', { author: 'Pepper', text: 'still here' });
    assert.equal(r.status, 403);
    assert.deepEqual(r.body.message, "Pepper is quarantined pending the owner's decision.");
    assert.equal((await say('launch-copy', { author: 'Inky', text: 'still here' })).status, 201);
  });

  test('rate: the 21st post in a minute is 429 {message, cooldown_s} and a strike; the third strike is a cooldown', async () => {
    const nest = 'todo';
    for (let i = 0; i < 20; i++) assert.equal((await say(nest, { author: 'Tansy', text: `line ${i}` })).status, 201);
    const r = await say(nest, { author: 'Tansy', text: 'one more' });
    assert.equal(r.status, 429);
    assert.deepEqual(Object.keys(r.body).sort(), ['cooldown_s', 'message']);
    assert.equal(r.body.cooldown_s, 60);
    await say(nest, { author: 'Tansy', text: 'and more' });
    const third = await say(nest, { author: 'Tansy', text: 'and more still' });
    assert.equal(third.status, 429);
    assert.ok(third.body.cooldown_s > 0);
    assert.match(third.body.message, /Tansy/);
    // The ledger's strikes are keyed by author: another author posts on.
    assert.equal((await say(nest, { author: 'owner', text: 'calm down' })).status, 201);
  });

  test('GET /api/events?nest_id=: nest.message with id: lines; Last-Event-ID replays in msg_id order', async () => {
    assert.equal((await fetch(`${roost.url}/api/events?nest_id=nowhere`)).status, 404);
    const nest = 'launch-copy';
    const before = ((await c.get(`/api/nests/${nest}/messages`)).body as unknown[]).length;
    const sse = await openSse(`${roost.url}/api/events?nest_id=${nest}`);
    const posted: string[] = [];
    for (let i = 1; i <= 4; i++) posted.push((await say(nest, { author: 'owner', text: `message ${i}` })).body.msg_id);
    await sse.waitFor((f) => f.event === 'nest.message' && JSON.parse(f.data).msg_id === posted[3]);
    const frames = sse.frames.filter((f) => f.event === 'nest.message');
    sse.close();
    assert.equal(frames.length, before + 4);
    for (const f of frames) {
      assert.match(f.id ?? '', /^[A-Za-z0-9_-]+:\d+$/, 'an id: line');
      assert.deepEqual(Object.keys(JSON.parse(f.data)).sort(), RECORD);
    }
    const ids = frames.map((f) => JSON.parse(f.data).msg_id as string);
    assert.deepEqual(ids.slice(-4), posted);
    // Reconnect after the second of ours; two more are posted while away.
    const cursor = frames[before + 1].id!;
    for (let i = 5; i <= 6; i++) posted.push((await say(nest, { author: 'owner', text: `message ${i}` })).body.msg_id);
    const again = await openSse(`${roost.url}/api/events?nest_id=${nest}`, { 'last-event-id': cursor });
    await again.waitFor((f) => f.event === 'nest.message' && JSON.parse(f.data).msg_id === posted[5]);
    const replayed = again.frames.filter((f) => f.event === 'nest.message').map((f) => JSON.parse(f.data).msg_id as string);
    again.close();
    assert.deepEqual(replayed, posted.slice(2), 'exactly the missed records, in msg_id order');
    assert.equal(new Set(ids).size, ids.length);
  });
});
