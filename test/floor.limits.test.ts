// Bounded cost per request on the floor (issue 12, part 7): what one request
// or one stored event may create is capped at the edge and again in the fold,
// and no fold step walks the whole floor. The hostile batch is one 125 KB
// POST /events of 200 messages, each to 50 agents nobody has seen: it made
// 10,000 agents, held the event loop for 9 s and made the restart take 52 s.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { LIMITS, applyEvent, emptyFloor, floorFromJSON, floorToJSON, newAgentsIn, type FloorEvent, type FloorState } from '../src/core/floor.js';
import { MAX_NEW_AGENTS_PER_BATCH } from '../src/core/floor-wire.js';
import { inProcess, post } from './support/server.js';

type Server = Awaited<ReturnType<typeof inProcess>>;

const T0 = 1_700_000_000_000;

/** 200 messages, each to 50 recipients that are not on the floor. */
function hostileBatch(round = 0): FloorEvent[] {
  return Array.from({ length: 200 }, (_, i) => ({
    type: 'message',
    agent: `sender-${round}-${i}`,
    team: 'swarm',
    to: Array.from({ length: 50 }, (_, j) => `r${round}-${i}-${j}`),
    text: 'hi',
  }));
}

/** The longest time the event loop was held while `f` ran (a 1 ms timer's largest gap). */
async function longestStall<T>(f: () => Promise<T>): Promise<{ value: T; stallMs: number }> {
  let last = performance.now();
  let max = 0;
  const probe = setInterval(() => {
    const now = performance.now();
    max = Math.max(max, now - last);
    last = now;
  }, 1);
  await new Promise((r) => setTimeout(r, 20));
  max = 0;
  try {
    const value = await f();
    await new Promise((r) => setTimeout(r, 50)); // the fold after the commit shows here too
    return { value, stallMs: max };
  } finally {
    clearInterval(probe);
  }
}

function checkDesks(s: FloorState): void {
  const used = new Map<string, Set<number>>();
  for (const a of s.agents.values()) {
    const u = used.get(a.team) ?? new Set();
    assert.ok(!u.has(a.desk), `desk ${a.desk} of ${a.team} is taken once`);
    u.add(a.desk);
    used.set(a.team, u);
  }
}

describe('the hostile batch over HTTP', () => {
  let srv: Server;
  before(async () => {
    srv = await inProcess();
  });
  after(() => srv.close());

  test('is refused with 413 at once, stores nothing and creates nobody', async () => {
    const body = JSON.stringify(hostileBatch());
    assert.ok(body.length > 120_000 && body.length < 130_000, `about 125 KB (${body.length})`);
    const headBefore = await srv.store.head(srv.floor.stream);
    const { value: r, stallMs } = await longestStall(() => post(srv.url, body));
    assert.equal(r.status, 413, JSON.stringify(r.json));
    assert.equal(r.json.kind, 'too_large');
    assert.match(r.json.message, /at most 200 new agents/);
    assert.match(r.json.message, /brings more/);
    assert.equal(await srv.store.head(srv.floor.stream), headBefore, 'nothing stored');
    assert.equal(srv.floor.state.agents.size, 0);
    // A generous bound (the machine is shared); the target, under 50 ms, is measured by `npm run bench`.
    assert.ok(stallMs < 500, `the event loop was held ${stallMs.toFixed(0)} ms`);
  });

  test('a batch that brings 200 new agents is fine; one more is refused; ids already on the floor do not count', async () => {
    const joins = Array.from({ length: 200 }, (_, i) => ({ type: 'join', agent: `w-${i}`, team: 'Wide' }));
    assert.equal((await post(srv.url, joins)).status, 200);
    const again = [...joins.slice(1), { type: 'message', agent: 'w-0', to: ['w-1', 'w-2', 'new-1'] }];
    assert.equal((await post(srv.url, again)).status, 200, 'agents already on the floor are not new');
    const tooMany = Array.from({ length: 200 }, (_, i) => ({ type: 'message', agent: `m-${i}`, to: `n-${i}` }));
    const r = await post(srv.url, tooMany);
    assert.equal(r.status, 413);
    assert.match(r.json.message, /at most 200 new agents/);
  });
});

describe('a full floor', () => {
  let srv: Server;
  before(async () => {
    srv = await inProcess();
    // Fill it past the edge, as old stored events or another node could.
    const events = Array.from({ length: LIMITS.agents }, (_, i) => ({ type: 'join', agent: `a-${i}`, team: `t-${i % 20}`, ts: Date.now() }));
    for (let i = 0; i < events.length; i += 1000) await srv.store.append(srv.floor.stream, events.slice(i, i + 1000).map((e) => ({ type: e.type, body: JSON.stringify(e) })));
    const deadline = Date.now() + 20_000;
    while (srv.floor.state.agents.size < LIMITS.agents && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  });
  after(() => srv.close());

  test('refuses a new agent with 409 and says why, and still takes events about the agents on it', async () => {
    assert.equal(srv.floor.state.agents.size, LIMITS.agents);
    const r = await post(srv.url, { type: 'join', agent: 'one-too-many' });
    assert.equal(r.status, 409);
    assert.equal(r.json.kind, 'conflict');
    assert.match(r.json.message, /at most 10000 agents/);
    const ok = await post(srv.url, { type: 'status', agent: 'a-7', status: 'working' });
    assert.equal(ok.status, 200);
    const st = await (await fetch(srv.url + '/state')).json();
    assert.equal(st.agents.length, LIMITS.agents);
    assert.equal(st.agents.find((a: { id: string }) => a.id === 'a-7').status, 'working');
  });
});

describe('the fold clamps what reaches it', () => {
  test('the hostile batch, stored anyway, folds quickly and stops at the floor cap', () => {
    const s = emptyFloor();
    const t = performance.now();
    let events = 0;
    for (let round = 0; round < 2; round++)
      for (const e of hostileBatch(round)) {
        applyEvent(s, { ...e, ts: T0 + events++ });
      }
    const ms = performance.now() - t;
    assert.equal(s.agents.size, LIMITS.agents, 'no more than the cap');
    checkDesks(s);
    // 20,400 would-be agents in one team: desks from a free list, not a scan of the floor (this took seconds).
    assert.ok(ms < 2000, `folding took ${ms.toFixed(0)} ms`);
    // Full: a new agent's event is ignored, a message to an unknown recipient sends no plane to it.
    const before = s.rev;
    assert.deepEqual(applyEvent(s, { type: 'join', agent: 'late', ts: T0 + events }), []);
    assert.equal(s.rev, before, 'an ignored event changes nothing');
    const fx = applyEvent(s, { type: 'message', agent: 'sender-0-0', to: ['sender-0-1', 'nobody'], text: 'x', ts: T0 + events + 1 });
    assert.deepEqual(
      fx.filter((f) => f.kind === 'plane').map((f) => (f as { to: string }).to),
      ['sender-0-1'],
    );
    assert.equal(s.agents.has('nobody'), false);
    // A hint that needs a new helper desk: the parent is seen, nothing else happens.
    const parent = s.agents.get('sender-0-2')!;
    const fx2 = applyEvent(s, { type: 'leave', agent: 'sender-0-2', subagent: { type: 'Explore' }, ts: T0 + events + 2 });
    assert.deepEqual(fx2, []);
    assert.equal(parent.leftAt, null, 'the parent did not walk out in its helper’s place');
    assert.equal(parent.lastSeen, T0 + events + 2);
  });

  test('a snapshot of a big floor loads with its free desks: the next desks match a fold that never stopped', () => {
    const s = emptyFloor();
    for (let i = 0; i < 3000; i++) applyEvent(s, { type: 'join', agent: `x-${i}`, team: 'T', role: i === 5 ? 'lead' : 'dev', ts: T0 + i });
    for (let i = 0; i < 3000; i += 7) applyEvent(s, { type: 'join', agent: `x-${i}`, team: 'U', ts: T0 + 3000 + i });
    const shipped = floorFromJSON(JSON.parse(JSON.stringify(floorToJSON(s))));
    for (const f of [s, shipped]) for (let i = 0; i < 500; i++) applyEvent(f, { type: 'join', agent: `y-${i}`, team: 'T', ts: T0 + 9000 + i });
    assert.deepEqual(floorToJSON(shipped), floorToJSON(s));
    checkDesks(s);
  });

  test('a helper id at the length cap made of primes does not loop forever', () => {
    const s = emptyFloor();
    const id = "'".repeat(LIMITS.id);
    applyEvent(s, { type: 'join', agent: id, ts: T0 });
    applyEvent(s, { type: 'tool', agent: id, subagent: { type: 'x' }, ts: T0 + 1 });
    applyEvent(s, { type: 'tool', agent: id, subagent: { type: 'y' }, ts: T0 + 2 });
    assert.equal(s.agents.size, 3);
    for (const a of s.agents.values()) assert.ok(a.id.length <= LIMITS.id);
  });

  test('newAgentsIn counts what a batch would bring, as the fold would', () => {
    const s = emptyFloor();
    applyEvent(s, { type: 'join', agent: 'a', ts: T0 });
    applyEvent(s, { type: 'join', agent: 'kid', parent: 'boss', ts: T0 });
    assert.equal(newAgentsIn(s, [{ type: 'status', agent: 'a' }]), 0);
    assert.equal(newAgentsIn(s, [{ type: 'status', agent: ' b ' }, { type: 'tool', agent: 'b' }]), 1, 'trimmed like the fold, counted once');
    assert.equal(newAgentsIn(s, [{ type: 'message', agent: 'a', to: ['a', 'b', 'b', 'c'] }]), 2, 'not the sender, each once');
    assert.equal(newAgentsIn(s, [{ type: 'message', agent: 'kid', text: 'hi' }]), 1, 'no `to`: the parent, if it is not on the floor');
    assert.equal(newAgentsIn(s, [{ type: 'reset' }, { type: 'status', agent: 'a' }]), 1, 'after a reset everyone is new');
    assert.equal(newAgentsIn(s, hostileBatch()), 200 + 200 * 50);
    assert.equal(newAgentsIn(s, hostileBatch(), MAX_NEW_AGENTS_PER_BATCH), MAX_NEW_AGENTS_PER_BATCH + 1, 'stops counting past the cap');
    assert.equal(newAgentsIn(s, [{ type: 'message', agent: 'a', to: ['b', 'c'] }], 5), 2);
  });
});
