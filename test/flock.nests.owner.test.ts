// Nests, from the contract's words (issue 36 points 3 and 9, issue 37 point 9),
// over real HTTP and SSE with the scripted model stand-in:
// - addressing: a claim or deliver posted without `to` is addressed to the
//   requester it answers (`refers_to`'s author); "@Name" at the start of the
//   text addresses that member when `to` is empty; a request not yet
//   classified has `mode: ""`;
// - what an owner can do directly, each a route and an event on the flock's
//   stream: lift a quarantine (with a reason, logged), remove a spun crow,
//   rename or delete a nest (its messages kept in the log);
// - a nest name with a control character: one cleaning for the route and the
//   fold, so no false 409, and nothing written on a refused create.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { inProcess } from './support/server.js';
import { flockModel, type FlockModel } from './support/flock-model.js';
import { openSse, type SseReader } from './support/sse.js';
import { until } from './support/until.js';
import type { Roost } from '../src/server/index.js';

type Rec = Record<string, any>;

describe('nests: addressing, the owner\'s direct actions, names', () => {
  let model: FlockModel;
  let roost: Roost;
  let flock: SseReader;
  before(async () => {
    model = await flockModel('anthropic');
    roost = await inProcess({ models: model.roster(), flockBanterWaitMs: 500, flockVerdictWindowMs: 60_000 });
    flock = await openSse(`${roost.url}/live?s=${encodeURIComponent('flock:default')}`);
  });
  after(async () => {
    flock.close();
    await roost.close();
    await model.close();
  });

  const send = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: Rec }> => {
    const r = await fetch(roost.url + path, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : null };
  };
  const post = (nest: string, body: Rec) => send('POST', `/api/nests/${nest}/messages`, body);
  /** The next event of `type` on the flock's stream (the one live connection) matching `match`. */
  const logged = async (type: string, match: (e: Rec) => boolean = () => true): Promise<Rec> => {
    const parse = (data: string): Rec | null => {
      const f = JSON.parse(data) as Rec;
      return f.e === 'event' && f.d?.event ? (f.d.event as Rec) : null;
    };
    const f = await flock.waitFor((x) => {
      if (x.event !== 'message') return false;
      const e = parse(x.data);
      return !!e && e.type === type && match(e);
    }, 10_000);
    return parse(f.data)!;
  };
  const logHas = async (type: string, match: (e: Rec) => boolean) => {
    const entries = await roost.store.read(roost.flock.stream, 0, 100_000);
    return entries.map((e) => JSON.parse(e.body) as Rec).some((b) => b.type === type && match(b));
  };

  test('a claim or deliver without `to` answers its requester; "@Name" addresses a member; an unclassified request has mode ""', async () => {
    assert.equal((await send('POST', '/api/nests', { name: 'Address', crows: ['Pepper', 'Inky'] })).status, 201);
    // A crow's request, answered by another crow over HTTP without `to`.
    const req = await post('address', { author: 'Pepper', kind: 'request', to: 'Inky', text: 'Inky, could you check the tagline for typos?' });
    assert.equal(req.status, 201, JSON.stringify(req.body));
    const claim = await post('address', { author: 'Inky', kind: 'claim', text: 'I will take this one.', refers_to: req.body.msg_id });
    assert.equal(claim.status, 201, JSON.stringify(claim.body));
    assert.deepEqual([claim.body.kind, claim.body.to], ['claim', 'Pepper']);
    const del = await post('address', { author: 'Inky', kind: 'deliver', text: 'Done: no typos in the tagline.', refers_to: req.body.msg_id });
    assert.deepEqual([del.body.kind, del.body.to], ['deliver', 'Pepper']);
    // The owner's request: the crow's answer goes back to the owner; a `to` given stands.
    const mine = await post('address', { kind: 'request', to: 'Hugin', text: 'pleaseclaim: draft the release note' });
    const back = await post('address', { author: 'Inky', kind: 'deliver', text: 'Here is the draft of the release note.', refers_to: mine.body.msg_id });
    assert.equal(back.body.to, 'owner');
    const given = await post('address', { author: 'Inky', kind: 'deliver', text: 'Here is another draft.', refers_to: mine.body.msg_id, to: 'Pepper' });
    assert.equal(given.body.to, 'Pepper');
    // @Name at the start of the text, when `to` is empty (any case; the whole name; a service role too).
    for (const [text, to] of [
      ['@Inky can you look at this?', 'Inky'],
      ['@pepper, a word about the tagline', 'Pepper'],
      ['@Quill please summarise the thread', 'Quill'],
      ['@owner: a question for you', 'owner'],
      ['@Inkyx is not a crow', ''],
      ['Hello @Inky, in the middle', ''],
    ] as const) {
      const r = await post('address', { author: 'Pepper', kind: 'say', text });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      assert.equal(r.body.to, to, text);
    }
    assert.equal((await post('address', { author: 'Pepper', kind: 'say', text: '@Inky hello', to: 'owner' })).body.to, 'owner', 'a `to` given stands');
    // A request neither Jev nor a header classifies: mode "".
    const unsure = await post('address', { kind: 'request', text: 'qwerty' });
    assert.equal(unsure.status, 201, JSON.stringify(unsure.body));
    assert.deepEqual([unsure.body.kind, unsure.body.mode, unsure.body.mode_tagged_by], ['request', '', '']);
  });

  test('the crows the server invokes address their answer to the requester', async () => {
    const r = await post('todo', { author: 'Pepper', kind: 'request', to: 'Inky', text: 'please check the launch checklist' });
    assert.equal(r.status, 201);
    const answer = await until('Inky\'s answer', () => [...roost.flock.state.nests.get('todo')!.messages.values()].find((m) => m.refers_to === r.body.msg_id && m.author === 'Inky'), 15_000);
    assert.equal(answer.to, 'Pepper');
  });

  test('the owner lifts a quarantine directly, with a reason, logged', async () => {
    const req = await post('todo', { kind: 'request', to: 'Rook', text: 'pleaseclaim: check the launch date' });
    const del = await post('todo', { author: 'Rook', kind: 'deliver', text: 'it contradicts what Inky said: Monday', refers_to: req.body.msg_id, to: 'owner' });
    assert.equal(del.status, 201);
    await until('the quarantine', () => roost.flock.state.quarantine.has('Rook'), 15_000);
    assert.equal((await send('POST', '/api/quarantine/Rook/lift', {})).status, 400, 'a reason is required');
    assert.equal((await send('POST', '/api/quarantine/Inky/lift', { reason: 'no' })).status, 404, 'Inky is not quarantined');
    const lift = await send('POST', '/api/quarantine/Rook/lift', { reason: 'checked the thread: a false alarm' });
    assert.equal(lift.status, 200, JSON.stringify(lift.body));
    assert.deepEqual([lift.body.crow, lift.body.reason], ['Rook', 'checked the thread: a false alarm']);
    const e = await logged('quarantine.lifted', (x) => x.crow === 'Rook');
    assert.equal(e.reason, 'checked the thread: a false alarm');
    assert.equal(typeof e.by, 'string');
    assert.deepEqual((await send('GET', '/api/nests')).body.quarantined, []);
    assert.equal((await post('todo', { author: 'Rook', text: 'back to work' })).status, 201);
  });

  test('the owner removes a spun crow: gone from the registry, its name free again', async () => {
    const order = await post('todo', { kind: 'request', to: 'Boss', text: 'spin Wren on Pepper as regular' });
    assert.equal(order.status, 201);
    await until('Wren', () => roost.flock.state.spun.has('Wren'), 15_000);
    assert.equal((await send('DELETE', '/api/crows/Nobody', { reason: 'x' })).status, 404);
    assert.equal((await send('DELETE', '/api/crows/Pepper', { reason: 'x' })).status, 404, 'a persona crow is not removable');
    const r = await send('DELETE', '/api/crows/Wren', { reason: 'a test crow' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    await logged('crow.removed', (x) => x.name === 'Wren' && x.reason === 'a test crow');
    assert.deepEqual((await send('GET', '/api/crows')).body.crows, []);
    assert.equal((await post('todo', { author: 'Wren', text: 'still here?' })).status, 400, 'no longer a crow');
  });

  test('the owner renames and deletes a nest: the id stays; deleted, it is gone but its messages stay in the log', async () => {
    assert.equal((await send('POST', '/api/nests', { name: 'Old room', crows: ['Hugin'] })).status, 201);
    assert.equal((await post('old-room', { text: 'a message to keep' })).status, 201);
    const ren = await send('PUT', '/api/nests/old-room', { name: '  Better   name ' });
    assert.equal(ren.status, 200, JSON.stringify(ren.body));
    assert.deepEqual(ren.body, { nest_id: 'old-room', name: 'Better name', crows: ['Hugin'] });
    await logged('nest.renamed', (x) => x.nest_id === 'old-room');
    assert.equal((await send('GET', '/api/nests')).body.nests.find((n: Rec) => n.nest_id === 'old-room').name, 'Better name');
    assert.equal((await send('PUT', '/api/nests/todo', { name: 'Other' })).status, 400, 'todo keeps its name');
    assert.equal((await send('PUT', '/api/nests/old-room', { name: '!!!' })).status, 400);
    assert.equal((await send('PUT', '/api/nests/nowhere', { name: 'x' })).status, 404);

    assert.equal((await send('DELETE', '/api/nests/todo', {})).status, 400, 'todo stays');
    const del = await send('DELETE', '/api/nests/old-room', {});
    assert.equal(del.status, 200, JSON.stringify(del.body));
    await logged('nest.deleted', (x) => x.nest_id === 'old-room');
    assert.equal((await send('GET', '/api/nests/old-room/messages')).status, 404);
    assert.ok(!(await send('GET', '/api/nests')).body.nests.some((n: Rec) => n.nest_id === 'old-room'));
    assert.ok(await logHas('nest.message', (b) => b.nest_id === 'old-room' && b.text === 'a message to keep'), 'its messages stay in the log');
    // Its id stays its old messages': a new nest of that name is refused.
    const again = await send('POST', '/api/nests', { name: 'Old room', crows: ['Hugin'] });
    assert.equal(again.status, 409);
    assert.equal((await send('DELETE', '/api/nests/old-room', {})).status, 404);
  });

  test('a nest name with a control character: the name the fold keeps, no false 409, nothing written when refused', async () => {
    const r = await send('POST', '/api/nests', { name: 'q\u0001r', crows: ['Hugin'] });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    assert.deepEqual([r.body.nest_id, r.body.name], ['qr', 'qr']);
    const tab = await send('POST', '/api/nests', { name: 'tab\there', crows: ['Hugin'] });
    assert.equal(tab.status, 201, JSON.stringify(tab.body));
    assert.deepEqual([tab.body.nest_id, tab.body.name], ['tab-here', 'tab here']);
    const before = await roost.store.head(roost.flock.stream);
    for (const body of [{ name: '\u0001\u0002', crows: ['Hugin'] }, { name: 'q\u0007r', crows: ['Hugin'] }, { name: 'fine', crows: ['Nobody'] }]) {
      const no = await send('POST', '/api/nests', body);
      assert.ok(no.status === 400 || no.status === 409, JSON.stringify(no.body));
    }
    assert.equal(await roost.store.head(roost.flock.stream), before, 'nothing written');
  });
});
