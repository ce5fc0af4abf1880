// Nests that answer (spec/flock-events.md, "Nest messages" and "Nests";
// issue 14, parts 4 and 5) over real HTTP and SSE, with the scripted model
// stand-ins (support/flock-model.ts): must-respond (exactly one crow per
// request, a conspiracy's distinct crows and readings, the first claim takes
// a solo or split request, nothing called while nothing pends, a bounded
// retry), Quill (one deliver; the relay; the one say when it names no
// member), the Boss (spin-ups, the cap, taken names, a saturated flock) and
// GET /api/crows.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { inProcess } from './support/server.js';
import { flockModel, type BrainOptions, type FlockModel } from './support/flock-model.js';
import { flockClient, type FlockClient } from './support/flock-client.js';
import { openSse, type SseReader } from './support/sse.js';
import { until } from './support/until.js';
import type { Roost } from '../src/server/index.js';

type Rec = Record<string, any>;

/** A gate the stand-in's "hold" answers wait for; `open()` lets them go and arms a new one. */
function gate(o: BrainOptions): { open(): void } {
  let release = () => {};
  const arm = () => {
    o.hold = new Promise<void>((r) => (release = r));
  };
  arm();
  return {
    open() {
      release();
      arm();
    },
  };
}

interface Room {
  sse: SseReader;
  /** The nest's records seen on its stream so far (the latest copy of each). */
  records(): Rec[];
  /** The first record matching, waiting for it on the stream. */
  next(match: (r: Rec) => boolean, timeoutMs?: number): Promise<Rec>;
  close(): void;
}

async function room(url: string, nest: string): Promise<Room> {
  const sse = await openSse(`${url}/api/events?nest_id=${nest}`);
  const records = () => {
    const byId = new Map<string, Rec>();
    for (const f of sse.frames) if (f.event === 'nest.message') byId.set(JSON.parse(f.data).msg_id, JSON.parse(f.data));
    return [...byId.values()];
  };
  return {
    sse,
    records,
    async next(match, timeoutMs = 10_000) {
      const f = await sse.waitFor((x) => x.event === 'nest.message' && match(JSON.parse(x.data)), timeoutMs);
      return JSON.parse(f.data) as Rec;
    },
    close: () => sse.close(),
  };
}

describe('must-respond, Quill and the Boss', () => {
  let model: FlockModel;
  let roost: Roost;
  let c: FlockClient;
  const brain: BrainOptions = {};
  const hold = gate(brain);
  before(async () => {
    model = await flockModel('anthropic', brain);
    roost = await inProcess({ models: model.roster(), flockBanterWaitMs: 500 });
    c = flockClient(roost.url);
    for (const [name, crows] of [
      ['Desk', ['Pepper', 'Inky']],
      ['Quiet', ['Rook']],
      ['Relay', ['Pepper', 'Corvin']],
    ] as const)
      assert.equal((await c.post('/api/nests', { name, crows })).status, 201);
  });
  after(async () => {
    hold.open();
    await roost.close();
    await model.close();
  });
  const post = async (nest: string, body: Record<string, unknown>): Promise<Rec> => {
    const r = await c.post(`/api/nests/${nest}/messages`, body);
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body as Rec;
  };
  /** Model calls answering one message (the message a nest call answers follows its prompt's last `>>> `). */
  const callsFor = (msg_id: string) => model.asks().filter((a) => a.user.slice(a.user.lastIndexOf('>>> ')).startsWith(`>>> ${msg_id} `));
  /** Every crow sent for a message (nest.flying in the fold). */
  const sent = (nest: string, msg_id: string) => [...roost.flock.state.nests.get(nest)!.messages.get(msg_id)!.sent];
  /** Waits until no nest flight is in the air and nothing is left to send, then a little more (a loop would show). */
  const settled = async (graceMs = 300) => {
    for (let i = 0; i < 200; i++) {
      if (![...roost.flock.state.airborne.keys()].some((k) => k.startsWith('N\u0000'))) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    await new Promise((r) => setTimeout(r, graceMs));
  };
  const answersTo = (records: Rec[], msg_id: string) => records.filter((r) => r.refers_to === msg_id);

  test('nothing pends, nothing is called: talk, a request to a person, an idle flock holds no lease', async () => {
    const w = await room(roost.url, 'quiet');
    await post('quiet', { author: 'owner', text: 'morning, crows' });
    await post('quiet', { author: 'Rook', text: 'morning' });
    // A request to the owner waits for a person: no crow is invoked for it.
    const ask = await post('quiet', { author: 'Rook', kind: 'request', to: 'owner', text: 'Can you write the release notes?' });
    assert.equal(ask.kind, 'request');
    await w.next((r) => r.msg_id === ask.msg_id);
    await settled(600);
    assert.equal(model.asks().length, 0, 'no model call');
    assert.equal(roost.flock.state.lease, null, 'nobody took the lease: nothing was appended to drive');
    assert.deepEqual(sent('quiet', ask.msg_id), []);
    assert.equal(w.records().length, 3);
    w.close();
  });

  test('a request invokes exactly one crow: core first, then addressed, then borrowed; its deliver goes back to the requester', async () => {
    const w = await room(roost.url, 'desk');
    const r1 = await post('desk', { author: 'owner', kind: 'request', text: 'Please draft three taglines for the launch.' });
    assert.equal(r1.mode, 'solo');
    const a1 = await w.next((r) => r.refers_to === r1.msg_id);
    assert.deepEqual({ kind: a1.kind, author: a1.author, to: a1.to, tagged_by: a1.tagged_by }, { kind: 'deliver', author: 'Pepper', to: 'owner', tagged_by: 'jev' });
    // Addressed: that crow, though the rotation would pick another.
    const r2 = await post('desk', { author: 'owner', kind: 'request', to: 'Pepper', text: 'Pepper, can you write the release notes?' });
    assert.equal((await w.next((r) => r.refers_to === r2.msg_id)).author, 'Pepper');
    // Addressed to a crow outside the core: it is borrowed, and a member from then on.
    const r3 = await post('desk', { author: 'owner', kind: 'request', to: 'Hugin', text: 'Hugin, can you write a note to the owner?' });
    assert.equal((await w.next((r) => r.refers_to === r3.msg_id)).author, 'Hugin');
    const flight = roost.flock.state.nests.get('desk')!.flights.get(`${r3.msg_id}\u0000Hugin`)!;
    assert.equal(flight.borrowed, true);
    // The rotation moved on: the next open request goes to Inky.
    const r4 = await post('desk', { author: 'owner', kind: 'request', text: 'Can you write the changelog?' });
    assert.equal((await w.next((r) => r.refers_to === r4.msg_id)).author, 'Inky');
    await settled();
    for (const r of [r1, r2, r3, r4]) {
      assert.equal(sent('desk', r.msg_id).length, 1, `one crow for ${r.msg_id}`);
      assert.equal(callsFor(r.msg_id).length, 1, `one model call for ${r.msg_id}`);
      assert.equal(answersTo(w.records(), r.msg_id).length, 1, `one answer to ${r.msg_id}`);
      assert.equal(callsFor(r.msg_id)[0].tool, 'respond', 'a structured decision: the forced respond tool');
    }
    // The answers themselves call for nothing: no further call.
    const before = model.asks().length;
    await settled(400);
    assert.equal(model.asks().length, before);
    w.close();
  });

  test('claim, deliver and decline each count as responding: the request is answered once', async () => {
    const w = await room(roost.url, 'desk');
    const claim = await post('desk', { author: 'owner', kind: 'request', text: 'Please write the changelog, pleaseclaim' });
    const decline = await post('desk', { author: 'owner', kind: 'request', text: 'Please write the changelog, pleasedecline' });
    const c1 = await w.next((r) => r.refers_to === claim.msg_id);
    const d1 = await w.next((r) => r.refers_to === decline.msg_id);
    assert.equal(c1.kind, 'claim');
    assert.equal(d1.kind, 'decline');
    await settled();
    for (const r of [claim, decline]) {
      assert.equal(sent('desk', r.msg_id).length, 1, `a ${r.msg_id} answered by a ${r === claim ? 'claim' : 'decline'} gets no second crow`);
      assert.equal(answersTo(w.records(), r.msg_id).length, 1);
    }
    w.close();
  });

  test('a conspiracy invokes up to `invited` distinct crows, each with a distinct reading', async () => {
    const w = await room(roost.url, 'desk');
    const three = await post('desk', { author: 'owner', kind: 'request', mode: 'conspiracy', text: 'Everyone: give me your own take on the launch plan, each from a different angle.' });
    assert.deepEqual([three.mode, three.invited], ['conspiracy', 3]);
    const two = await post('desk', { author: 'owner', kind: 'request', mode: 'conspiracy', invited: 2, text: 'Three of you, read the launch brief each your own way.' });
    assert.deepEqual([two.mode, two.invited], ['conspiracy', 2]);
    for (const [r, n] of [
      [three, 3],
      [two, 2],
    ] as const) {
      for (let i = 0; i < n; i++) await w.next((x) => x.refers_to === r.msg_id && answersTo(w.records(), r.msg_id).length >= i + 1);
    }
    await settled();
    for (const [r, n] of [
      [three, 3],
      [two, 2],
    ] as const) {
      const answers = answersTo(w.records(), r.msg_id);
      assert.equal(answers.length, n, `${n} answers to ${r.msg_id}`);
      const crows = answers.map((a) => a.author);
      assert.equal(new Set(crows).size, n, 'distinct crows');
      assert.deepEqual(sent('desk', r.msg_id).sort(), [...crows].sort(), 'no other crow was sent');
      // Core first: Pepper and Inky, then one borrowed.
      if (n === 3) assert.ok(crows.includes('Pepper') && crows.includes('Inky'), crows.join());
      const readings = callsFor(r.msg_id).map((a) => /Yours is reading (\d) of (\d): ([^.]+)/.exec(a.system)!.slice(1).join('|'));
      assert.equal(new Set(readings).size, n, `distinct readings: ${readings.join(' / ')}`);
      assert.deepEqual(answers.map((a) => /Reading (\d) of (\d)/.exec(a.text)![2]), Array(n).fill(String(n)));
    }
    w.close();
  });

  test('solo and split requests are taken by the first claim: a crow coming back later posts nothing, and no one else is sent', async () => {
    const w = await room(roost.url, 'todo');
    for (const [mode, text] of [
      ['solo', 'hold: please draft a note about the roadmap'],
      ['split', 'hold: please split the migration into parts and take one each'],
    ] as const) {
      const req = await post('todo', { author: 'owner', kind: 'request', mode, text });
      assert.equal(req.mode, mode);
      // The driver sends one crow; its answer is held while two others claim over HTTP.
      for (let i = 0; i < 100 && sent('todo', req.msg_id).length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      const [invoked] = sent('todo', req.msg_id);
      assert.ok(invoked, 'a crow was sent');
      const others = ['Sable', 'Tansy', 'Rook', 'Munin'].filter((x) => x !== invoked);
      const first = await post('todo', { author: others[0], kind: 'claim', text: "I'll take this one.", refers_to: req.msg_id, to: 'owner' });
      const second = await post('todo', { author: others[1], kind: 'claim', text: "I'll take this one.", refers_to: req.msg_id, to: 'owner' });
      assert.equal(first.kind, 'claim');
      assert.equal(second.kind, 'claim');
      const pending = roost.flock.state.nests.get('todo')!.messages.get(req.msg_id)!;
      assert.deepEqual(pending.responders, [others[0]], `${mode}: the first claim took it`);
      hold.open();
      await settled();
      const answers = answersTo(w.records(), req.msg_id);
      assert.deepEqual(
        answers.map((a) => a.author),
        [others[0], others[1]],
        `${mode}: ${invoked}, back after the claim, posted nothing`,
      );
      assert.deepEqual(sent('todo', req.msg_id), [invoked], `${mode}: nobody else was sent`);
      const f = roost.flock.state.nests.get('todo')!.flights.get(`${req.msg_id}\u0000${invoked}`)!;
      assert.equal(f.state, 'ok', 'the crow landed');
    }
    w.close();
  });

  test('a crow that fails is replaced at most twice, then the request rests (no loop)', async () => {
    const w = await room(roost.url, 'desk');
    const req = await post('desk', { author: 'owner', kind: 'request', text: 'Please write the changelog, nestfail' });
    for (let i = 0; i < 200 && sent('desk', req.msg_id).length < 3; i++) await new Promise((r) => setTimeout(r, 25));
    await settled(600);
    const crows = sent('desk', req.msg_id);
    assert.equal(crows.length, 3, `three crows in all: ${crows.join()}`);
    assert.equal(new Set(crows).size, 3);
    for (const crow of crows) assert.equal(roost.flock.state.nests.get('desk')!.flights.get(`${req.msg_id}\u0000${crow}`)!.state, 'failed');
    const calls = callsFor(req.msg_id).length;
    await settled(600);
    assert.equal(callsFor(req.msg_id).length, calls, 'no further call');
    assert.equal(answersTo(w.records(), req.msg_id).length, 0);
    w.close();
  });

  test('Quill: a request gets exactly one deliver back (from the owner and from a crow)', async () => {
    const w = await room(roost.url, 'desk');
    const mine = await post('desk', { author: 'owner', kind: 'request', to: 'Quill', text: 'Quill, please summarise the thread.' });
    const d = await w.next((r) => r.refers_to === mine.msg_id);
    assert.deepEqual(
      { kind: d.kind, author: d.author, to: d.to, tagged_by: d.tagged_by, text: d.text },
      { kind: 'deliver', author: 'Quill', to: 'owner', tagged_by: 'harness', text: 'Delivered: the summary is below.' },
    );
    assert.equal(callsFor(mine.msg_id)[0].tool, 'quill');
    const theirs = await post('desk', { author: 'Inky', kind: 'request', to: 'Quill', text: 'Quill, please summarise the thread.' });
    const d2 = await w.next((r) => r.refers_to === theirs.msg_id);
    assert.deepEqual([d2.kind, d2.author, d2.to], ['deliver', 'Quill', 'Inky']);
    await settled();
    for (const r of [mine, theirs]) {
      assert.equal(answersTo(w.records(), r.msg_id).length, 1, 'exactly one message back');
      assert.deepEqual(sent('desk', r.msg_id), ['Quill']);
    }
    w.close();
  });

  test('the relay: one request from Quill to the named member (refers_to the owner, tagged_by harness), answered by that crow; nothing else', async () => {
    const w = await room(roost.url, 'relay');
    const ask = await post('relay', { author: 'owner', kind: 'request', to: 'Quill', text: 'Quill, relay to Pepper: write the launch email.' });
    const relay = await w.next((r) => r.refers_to === ask.msg_id);
    assert.deepEqual(
      { kind: relay.kind, author: relay.author, to: relay.to, refers_to: relay.refers_to, tagged_by: relay.tagged_by, mode: relay.mode },
      { kind: 'request', author: 'Quill', to: 'Pepper', refers_to: ask.msg_id, tagged_by: 'harness', mode: 'solo' },
    );
    // The addressed crow answers through the normal loop, back to Quill.
    const done = await w.next((r) => r.refers_to === relay.msg_id);
    assert.deepEqual([done.kind, done.author, done.to], ['deliver', 'Pepper', 'Quill']);
    await settled();
    assert.deepEqual(
      w.records().filter((r) => r.author === 'Quill').map((r) => r.msg_id),
      [relay.msg_id],
      'Quill posted the relay and nothing else',
    );
    assert.equal(answersTo(w.records(), ask.msg_id).length, 1);
    assert.deepEqual(sent('relay', relay.msg_id), ['Pepper']);

    // A crow that is not a member of this nest: one say back, no request.
    const stray = await post('relay', { author: 'owner', kind: 'request', to: 'Quill', text: 'Quill, relay to Hugin: write the launch email.' });
    const back = await w.next((r) => r.refers_to === stray.msg_id);
    assert.deepEqual([back.kind, back.author, back.to, back.tagged_by], ['say', 'Quill', 'owner', 'harness']);
    assert.match(back.text, /Hugin is not a crow of this nest/);
    await settled();
    assert.equal(answersTo(w.records(), stray.msg_id).length, 1, 'one say, nothing else');
    assert.equal(w.records().filter((r) => r.kind === 'request' && r.author === 'Quill').length, 1, 'no second relay');
    w.close();
  });

  test('the Boss: a spin-up (trust clamped to regular), a taken name, an unknown persona, a plain reply, the cap of 8; GET /api/crows sorted by name', async () => {
    assert.deepEqual((await c.get('/api/crows')).body, { crows: [] });
    const w = await room(roost.url, 'todo');
    const order = async (author: string, text: string): Promise<Rec> => {
      const r = await post('todo', { author, kind: 'request', to: 'Boss', text });
      assert.equal(r.kind, 'request', text);
      const says = await w.next((x) => x.refers_to === r.msg_id);
      assert.deepEqual([says.kind, says.author, says.to, says.tagged_by], ['say', 'Boss', author, 'harness']);
      assert.equal(callsFor(r.msg_id)[0].tool, 'order', 'the order is a forced tool call');
      return says;
    };
    const nova = await order('Hugin', 'Boss, please spin Nova on Hugin as trusted.');
    assert.match(nova.text, /^Nova joined the flock: a regular crow on Hugin's habits/);
    assert.deepEqual((await c.get('/api/crows')).body, { crows: [{ name: 'Nova', persona: 'Hugin', trust: 'regular' }] });
    // Names are unique against the personas and the registry (ignoring case).
    assert.match((await order('Munin', 'Boss, please spin Hugin on Munin.')).text, /name taken/);
    assert.match((await order('Munin', 'Boss, please spin nova on Munin.')).text, /name taken/);
    assert.match((await order('Munin', 'Boss, please spin Zed on Quill.')).text, /persona unknown/);
    assert.equal((await order('Pepper', 'Boss, how many crows are there?')).text, 'The flock has what it needs.');
    assert.equal((await c.get('/api/crows')).body.crows.length, 1, 'refusals wrote nothing');
    // Up to 8 (spun out of name order), then the cap.
    const names = ['Wren', 'Ash', 'Moth', 'Lark', 'Finch', 'Birch', 'Quartz'];
    for (const [i, n] of names.entries()) assert.match((await order(['Inky', 'Corvin', 'Sable'][i % 3], `Boss, please spin ${n} on Pepper as regular.`)).text, new RegExp(`^${n} joined the flock: a regular crow`));
    const full = await order('Tansy', 'Boss, please spin Ninth on Rook.');
    assert.match(full.text, /cap reached/);
    const crows = (await c.get('/api/crows')).body.crows as Rec[];
    assert.equal(crows.length, 8);
    assert.deepEqual(
      crows.map((x) => x.name),
      ['Nova', ...names].sort(),
      'sorted by name',
    );
    for (const x of crows) assert.deepEqual(Object.keys(x).sort(), ['name', 'persona', 'trust']);
    // A spun crow is an ordinary crow: a request to it is answered by it.
    const job = await post('todo', { author: 'owner', kind: 'request', to: 'Nova', text: 'Nova, can you write a note to the owner?' });
    assert.equal((await w.next((x) => x.refers_to === job.msg_id)).author, 'Nova');
    await settled();
    w.close();
  });
});

describe('a saturated flock', () => {
  let model: FlockModel;
  let roost: Roost;
  let c: FlockClient;
  const brain: BrainOptions = {};
  const hold = gate(brain);
  before(async () => {
    model = await flockModel('openai', brain);
    roost = await inProcess({ models: model.roster(), flockBanterWaitMs: 500 });
    c = flockClient(roost.url);
  });
  after(async () => {
    hold.open();
    await roost.close();
    await model.close();
  });

  test('the Boss neither replies nor writes the registry while 64 flights are in the air; nor later: the order is dropped (spec: "a saturated flock means no Boss reply, and no registry write")', async () => {
    const w = await room(roost.url, 'todo');
    const crows = ['Hugin', 'Munin', 'Pepper', 'Inky', 'Corvin', 'Sable', 'Tansy', 'Rook'];
    const post = async (author: string, to: string, text: string) => {
      const r = await c.post('/api/nests/todo/messages', { author, kind: 'request', to, text });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      assert.equal(r.body.kind, 'request');
    };
    // 4 held flights per worker (32), 16 for Quill, 16 for the Elder: the flock's 64.
    for (const [i, author] of crows.entries()) {
      const next = crows[(i + 1) % crows.length];
      for (let k = 0; k < 4; k++) await post(author, next, `hold: ${next}, please draft a note about the roadmap`);
      for (let k = 0; k < 2; k++) await post(author, 'Quill', 'hold: Quill, please summarise the thread');
      for (let k = 0; k < 2; k++) await post(author, 'Elder', 'hold: Elder, please review the plan');
    }
    const airborne = () => roost.flock.state.airborne.size;
    for (let i = 0; i < 200 && airborne() < 64; i++) await new Promise((r) => setTimeout(r, 25));
    assert.equal(airborne(), 64, 'the flock is saturated');
    const spin = await c.post('/api/nests/todo/messages', { author: 'owner', kind: 'request', to: 'Boss', text: 'Boss, please spin Nova on Hugin.' });
    assert.equal(spin.status, 201);
    const extra = await c.post('/api/nests/todo/messages', { author: 'owner', kind: 'request', to: 'Hugin', text: 'Hugin, can you write a note to the owner?' });
    assert.equal(extra.status, 201);
    await new Promise((r) => setTimeout(r, 800));
    assert.equal(model.asks().filter((a) => a.tool === 'order').length, 0, 'the Boss was not called');
    assert.deepEqual(roost.flock.state.nests.get('todo')!.messages.get(spin.body.msg_id)!.sent, [], 'the Boss did not fly');
    assert.equal(w.records().filter((r) => r.author === 'Boss').length, 0, 'no reply');
    assert.deepEqual((await c.get('/api/crows')).body, { crows: [] }, 'no registry write');
    assert.equal(airborne(), 64);
    // The flights come back: a request for a busy crow is taken up then, the Boss's order never.
    hold.open();
    await w.next((r) => r.refers_to === extra.body.msg_id, 20_000);
    await until('every flight landed', () => airborne() === 0, 20_000);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(model.asks().filter((a) => a.tool === 'order').length, 0, 'the Boss was never called');
    assert.equal(w.records().filter((r) => r.author === 'Boss' || r.refers_to === spin.body.msg_id).length, 0, 'no reply, ever');
    assert.deepEqual((await c.get('/api/crows')).body, { crows: [] }, 'no registry write, ever');
    // The same order in a flock with room: the Boss answers and spins.
    const again = await c.post('/api/nests/todo/messages', { author: 'owner', kind: 'request', to: 'Boss', text: 'Boss, please spin Nova on Hugin.' });
    assert.equal(again.status, 201);
    const says = await w.next((r) => r.refers_to === again.body.msg_id, 20_000);
    assert.deepEqual([says.author, says.kind], ['Boss', 'say']);
    assert.match(says.text, /^Nova joined the flock/);
    assert.deepEqual((await c.get('/api/crows')).body, { crows: [{ name: 'Nova', persona: 'Hugin', trust: 'stranger' }] });
    w.close();
  });
});
